"""Blind mode: the studio shows "model A", "model B"... instead of model names, and never a
curator's name, so that curators judge paintings and not the models that made them.

Everything here works from structured fields (a generator, an exclusion's model and photo
id), never by matching the English of a message: free text may carry a name anywhere.
"""

from __future__ import annotations

import string
from dataclasses import replace
from typing import TypeVar

from pool.diversity.analysis import PoolMetrics
from pool.selection.draft import REASONS, Exclusion
from refpool.core.store import Store, candidates

V = TypeVar("V")
UNKNOWN = "model ?"  # a model the store did not list when the aliases were made


def model_aliases(store: Store) -> dict[str, str]:
    """generator -> "model A", "model B"... (stable for a store: sorted by name)."""
    letters = string.ascii_uppercase
    return {
        name: "model " + (letters[i] if i < 26 else f"{letters[i // 26 - 1]}{letters[i % 26]}")
        for i, name in enumerate(sorted(candidates.generators(store)))
    }


def blind_detail(e: Exclusion, aliases: dict[str, str], params: dict[str, object]) -> str:
    """An exclusion worded for blind mode, from its structured fields only.

    `e.detail` is never used: it may hold a model name (say, inside an infrastructure error)
    or the curators who rejected it. Reasons without safe specifics get their general wording.
    """
    model = aliases.get(e.model, UNKNOWN) if e.model else "its model"
    if e.reason == "near_duplicate" and e.other_id is not None:
        return f"near-duplicate of {e.other_id} at distance {e.distance}"
    if e.reason == "photo_cap" and e.photo_id is not None:
        return f"photo {e.photo_id} already has {params.get('max_per_photo')}"
    if e.reason == "licence" and e.photo_id is not None:
        return f"photo {e.photo_id} has no open licence or no attribution"
    if e.reason == "model_cap":
        return f"{model} already has {params.get('max_per_model')}"
    return REASONS.get(e.reason, e.reason)


def blind_metrics(a: PoolMetrics, aliases: dict[str, str]) -> PoolMetrics:
    """The same metrics with model names replaced, so the rendered report cannot show them."""
    entries = {}
    for cid, e in a.entries.items():
        alias = aliases.get(e.candidate.generator, UNKNOWN)
        entries[cid] = replace(e, candidate=replace(e.candidate, generator=alias))
    mt = a.metrics

    def blind(by_model: dict[str, V]) -> dict[str, V]:
        return {aliases.get(k, UNKNOWN): v for k, v in by_model.items()}

    metrics = replace(
        mt,
        counts=replace(mt.counts, model=blind(mt.counts.model)),
        shares=replace(mt.shares, model=blind(mt.shares.model)),
        tier_by=replace(mt.tier_by, model=blind(mt.tier_by.model)),
    )
    return replace(a, entries=entries, metrics=metrics)
