"""Where a painting came from, as the export and its dataset card state it: the photo credit,
the refinement chain with its critiques, the renderer that drew it and the runs that made it."""

from __future__ import annotations

import json
import re
from typing import Any

from refpool.contracts import Candidate, Photo
from refpool.defaults import GATE_PROFILE
from refpool.store import Store, candidates

_SECRETISH = re.compile(r"key|token|secret|password|authorization", re.IGNORECASE)


def attribution(photo: Photo) -> str:
    """How a painting credits its reference photo."""
    return f"{photo.file_name} by {photo.author}, {photo.licence_label}, {photo.source_url}"


def critique_history(store: Store, candidate_id: int) -> list[dict[str, Any]]:
    """The candidate's refinement chain up to itself, oldest round first."""
    return [
        {
            "candidate_id": c.id,
            "round": c.round,
            "generator": c.generator,
            "accepted": c.accepted,
            "gate_codes": c.gate_codes,
            "critique": c.critique.to_dict() if c.critique else None,
        }
        for c in candidates.chain(store, candidate_id, descendants=False)
    ]


def render_info(store: Store, candidate: Candidate) -> tuple[dict[str, str], str]:
    """(renderer library versions, gate profile) of the render that made the candidate's PNG."""
    rows = []
    if candidate.render_id is not None:
        rows = store.query(
            "SELECT lib_versions, profile FROM renders WHERE id = ?", (candidate.render_id,)
        )
    if not rows and candidate.png_sha:
        rows = store.query(
            "SELECT lib_versions, profile FROM renders WHERE png_sha = ? ORDER BY id DESC LIMIT 1",
            (candidate.png_sha,),
        )
    if not rows:
        return {}, GATE_PROFILE
    return json.loads(rows[0]["lib_versions"] or "{}"), rows[0]["profile"]


def run_configs(store: Store, run_ids: list[int]) -> list[dict[str, Any]]:
    """{run, config} for each run that is still recorded, credentials scrubbed."""
    out = []
    for rid in run_ids:
        rows = store.query("SELECT config FROM runs WHERE id = ?", (rid,))
        if rows:
            out.append({"run": rid, "config": scrub(json.loads(rows[0]["config"]))})
    return out


def scrub(config: object) -> object:
    """Drop anything that looks like a credential from a run config before it is published."""
    if isinstance(config, dict):
        return {k: scrub(v) for k, v in config.items() if not _SECRETISH.search(str(k))}
    if isinstance(config, list):
        return [scrub(v) for v in config]
    return config
