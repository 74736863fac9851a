"""Selection: rated candidates -> a draft pool under stated constraints, with every exclusion explained.

Order of the checks for each candidate (the first that fails is the reason given):
  1. unrated / reject                    (tiers from curation.ratings only)
  2. not accepted by the gate, or no PNG
  3. photo without an open licence (CC0, CC-BY, CC-BY-SA, PD) or without author/source URL
  4. near-duplicate of an already chosen candidate (perceptual-hash distance <= dup_threshold)
  5. photo cap, model cap
  6. tier mix: that tier's quota (target x love_fraction love, the rest okay) is full
Eligible candidates are visited best-first within each tier (more love votes, more curators,
higher critic score, later round, lower id), the two tiers interleaved so that neither uses
up the photo and model caps first.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from pool.catalog import PoolItem, load_items
from pool.features import load_features
from refpool.contracts import OPEN_LICENCES, PoolVersion
from refpool.store import Store

# Calibrated with pool/calibrate.py on the renderer: one program re-rendered with seeds 0-3 gives
# dHash distances of 4-13; two different hibiscus programs (same layout, other colours) 18-27.
# The threshold sits midway: (13 + 18) // 2.
DEFAULT_DUP_THRESHOLD = 15
DEFAULT_TARGET = 178
DEFAULT_LOVE_FRACTION = 0.5

REASONS = {
    "unrated": "no live rating yet",
    "reject": "rated reject",
    "gate": "not accepted by the gate (or no image)",
    "png_missing": "its PNG file is missing from the store",
    "licence": "its photo has no open licence or no attribution",
    "near_duplicate": "near-duplicate of a chosen candidate",
    "photo_cap": "its photo already has max-per-photo candidates",
    "model_cap": "its model already has max-per-model candidates",
    "tier_mix": "its tier's quota is full",
}


class SelectionError(ValueError):
    """Bad parameters, or nothing at all can go in the pool."""


@dataclass(frozen=True)
class Exclusion:
    candidate_id: int
    reason: str  # a key of REASONS
    detail: str
    other_id: int | None = None
    distance: int | None = None


@dataclass
class Draft:
    candidate_ids: list[int]
    tiers: dict[int, str]
    excluded: list[Exclusion]
    params: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def count(self, tier: str) -> int:
        return sum(1 for t in self.tiers.values() if t == tier)

    def reasons(self) -> dict[str, list[Exclusion]]:
        out: dict[str, list[Exclusion]] = {}
        for e in self.excluded:
            out.setdefault(e.reason, []).append(e)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate_ids": self.candidate_ids,
            "tiers": {str(k): v for k, v in self.tiers.items()},
            "excluded": [asdict(e) for e in self.excluded],
            "params": self.params,
            "warnings": self.warnings,
            "counts": {
                "total": len(self.candidate_ids),
                "love": self.count("love"),
                "okay": self.count("okay"),
            },  # fmt: skip
            "excluded_counts": {k: len(v) for k, v in self.reasons().items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Draft:
        return cls(
            candidate_ids=[int(i) for i in data["candidate_ids"]],
            tiers={int(k): v for k, v in data["tiers"].items()},
            excluded=[Exclusion(**e) for e in data["excluded"]],
            params=data["params"],
            warnings=list(data.get("warnings", [])),
        )

    def to_pool_version(self, version: str, notes: str = "", created_at: str = "") -> PoolVersion:
        return PoolVersion(
            version=version,
            candidate_ids=sorted(self.candidate_ids),
            tiers={str(k): self.tiers[k] for k in sorted(self.candidate_ids)},
            created_at=created_at,
            notes=notes,
        )

    def summary(self) -> str:
        lines = [
            f"draft: {len(self.candidate_ids)} candidates (love {self.count('love')},"
            f" okay {self.count('okay')}); target {self.params['target']}"
        ]
        for reason, items in self.reasons().items():
            lines.append(f"  left out, {REASONS[reason]}: {len(items)}")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _rank_key(item: PoolItem) -> tuple:
    votes = Counter(item.votes.values())
    scores = (item.critique or {}).get("scores") or {}
    critic = sum(scores.values()) / len(scores) if scores else 0.0
    return (-votes["love"], -len(item.votes), -critic, -item.round, item.candidate_id)


def _check_params(target: int, max_per_photo, max_per_model, love_fraction, dup_threshold) -> None:
    if target < 1:
        raise SelectionError(f"--target must be at least 1 (got {target})")
    for name, cap in (("max-per-photo", max_per_photo), ("max-per-model", max_per_model)):
        if cap is not None and cap < 1:
            raise SelectionError(f"--{name} must be at least 1, or omitted for no cap (got {cap})")
    if not 0.0 <= love_fraction <= 1.0:
        raise SelectionError(f"--love-fraction must lie in 0..1 (got {love_fraction})")
    if not 0 <= dup_threshold <= 64:
        raise SelectionError(
            f"--dup-threshold is a perceptual-hash distance in 0..64 (got {dup_threshold})"
        )


def build_pool(
    store: Store,
    target: int = DEFAULT_TARGET,
    max_per_photo: int | None = None,
    max_per_model: int | None = None,
    love_fraction: float = DEFAULT_LOVE_FRACTION,
    dup_threshold: int = DEFAULT_DUP_THRESHOLD,
    progress: bool = False,
) -> Draft:
    """Choose up to `target` candidates; raise SelectionError if none at all is eligible."""
    _check_params(target, max_per_photo, max_per_model, love_fraction, dup_threshold)
    params = {"target": target, "max_per_photo": max_per_photo, "max_per_model": max_per_model,
              "love_fraction": love_fraction, "dup_threshold": dup_threshold}  # fmt: skip
    items = load_items(store)
    if not items:
        raise SelectionError(
            "the pool is empty: the store has no candidates. Generate some (refpool generate ...)"
            " and rate them in the studio first."
        )
    excluded: list[Exclusion] = []
    eligible: list[PoolItem] = []
    for item in items.values():
        why = _ineligible(store, item)
        if why:
            excluded.append(Exclusion(item.candidate_id, why[0], why[1]))
        else:
            eligible.append(item)
    if not eligible:
        counts = Counter(e.reason for e in excluded)
        detail = ", ".join(f"{n} {REASONS[r]}" for r, n in counts.most_common())
        raise SelectionError(
            f"no candidate can go in the pool ({len(items)} candidates: {detail})."
            " Rate candidates love or okay in the studio, and check photo licences."
        )

    feats = load_features(store, [i.png_sha for i in eligible if i.png_sha], progress=progress)
    love_quota = round(target * love_fraction)
    quota = {"love": love_quota, "okay": target - love_quota}
    queues = {t: sorted((i for i in eligible if i.tier == t), key=_rank_key) for t in quota}
    chosen: list[PoolItem] = []
    chosen_hashes: list[int] = []
    per_photo: Counter[int] = Counter()
    per_model: Counter[str] = Counter()
    filled: Counter[str] = Counter()
    pos = {t: 0 for t in quota}

    while True:
        open_tiers = [t for t in quota if pos[t] < len(queues[t]) and filled[t] < quota[t]]
        if not open_tiers:
            break
        tier = min(open_tiers, key=lambda t: (filled[t] / max(quota[t], 1), t))
        item = queues[tier][pos[tier]]
        pos[tier] += 1
        h = feats[item.png_sha].phash
        if chosen_hashes:
            dists = np.bitwise_count(np.array(chosen_hashes, dtype=np.uint64) ^ np.uint64(h))
            k = int(dists.argmin())
            if int(dists[k]) <= dup_threshold:
                other = chosen[k].candidate_id
                excluded.append(Exclusion(item.candidate_id, "near_duplicate",
                                          f"near-duplicate of {other} at distance {int(dists[k])}",
                                          other, int(dists[k])))  # fmt: skip
                continue
        if max_per_photo is not None and per_photo[item.photo_id] >= max_per_photo:
            excluded.append(Exclusion(item.candidate_id, "photo_cap",
                                      f"photo {item.photo_id} ({item.photo_file_name}) already has {max_per_photo}"))  # fmt: skip
            continue
        if max_per_model is not None and per_model[item.generator] >= max_per_model:
            excluded.append(Exclusion(item.candidate_id, "model_cap",
                                      f"model {item.generator} already has {max_per_model}"))  # fmt: skip
            continue
        chosen.append(item)
        chosen_hashes.append(h)
        per_photo[item.photo_id] += 1
        per_model[item.generator] += 1
        filled[tier] += 1

    for tier, queue in queues.items():
        for item in queue[pos[tier] :]:
            excluded.append(Exclusion(item.candidate_id, "tier_mix",
                                      f"{tier} quota of {quota[tier]} is full"))  # fmt: skip

    warnings = []
    for tier in quota:
        if filled[tier] < quota[tier]:
            warnings.append(
                f"only {filled[tier]} {tier} candidates fit the constraints (quota {quota[tier]});"
                " rate more, loosen the caps, or change --love-fraction"
            )
        if quota[tier] > 0 and filled[tier] < 2:
            warnings.append(
                f"fewer than 2 {tier} references: the RL env samples 2 love + 2 okay per comparison"
            )
    if len(chosen) < target:
        warnings.append(f"target {target} not reached: the draft has {len(chosen)}")
    excluded.sort(key=lambda e: e.candidate_id)
    return Draft(
        candidate_ids=sorted(i.candidate_id for i in chosen),
        tiers={i.candidate_id: str(i.tier) for i in sorted(chosen, key=lambda i: i.candidate_id)},
        excluded=excluded,
        params=params,
        warnings=warnings,
    )


def _ineligible(store: Store, item: PoolItem) -> tuple[str, str] | None:
    if item.tier is None:
        return ("unrated", "no curator has rated it (skips do not count)")
    if item.tier == "reject":
        vetoes = sorted(c for c, t in item.votes.items() if t == "reject")
        return ("reject", f"rejected by {', '.join(vetoes)}")
    if not item.accepted or item.infra_error or not item.png_sha:
        codes = sorted({v.get("code", "?") for v in item.violations}) or ["not accepted"]
        return (
            "gate",
            f"gate: {', '.join(codes)}"
            + (f"; infra: {item.infra_error}" if item.infra_error else ""),
        )
    if not item.licence_ok:
        return ("licence", f"photo {item.photo_id} ({item.photo_file_name}) licence"
                f" {item.photo_licence!r} is not one of {', '.join(OPEN_LICENCES)}")  # fmt: skip
    if not item.attribution_ok:
        return ("licence", f"photo {item.photo_id} ({item.photo_file_name}) has no author or source URL to attribute")  # fmt: skip
    if not store.png_path(item.png_sha).exists() and not _has_cached(store, item.png_sha):
        return ("png_missing", f"{store.png_path(item.png_sha)} is missing")
    return None


def _has_cached(store: Store, sha: str) -> bool:
    return bool(store.query("SELECT 1 FROM image_features WHERE png_sha = ?", (sha,)))


# -- drafts in the store --------------------------------------------------------------------
def save_draft(store: Store, draft: Draft) -> int:
    return store.insert("pool_drafts", {"params": draft.params, "draft": draft.to_dict()})


def latest_draft(store: Store) -> Draft | None:
    rows = store.query("SELECT draft FROM pool_drafts ORDER BY id DESC LIMIT 1")
    return Draft.from_dict(json.loads(rows[0]["draft"])) if rows else None
