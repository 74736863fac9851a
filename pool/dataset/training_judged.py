"""Judge-resolved preference pairs: two programs for the same photo that the curators left
level (the same tier, or one of them unrated), which a pairwise judge ordered the same way in
both presentation orders. They are added to `preference` only when a release asks for them,
each labelled `judge:<judge key>`, so a trainer can keep them apart from the curators' pairs.

A pair is left out when any judge saw it the other way, when either program was rated
reject, or when the curators already order it (their pairs come first, by PREFERENCE_RULE).
"""

from __future__ import annotations

from typing import Any

from pool.catalog import PoolEntry
from pool.dataset.training_prompts import fenced
from refpool.core.contracts import Photo
from refpool.core.store import Store, calibration

JUDGE_RULE = (
    "Judge-resolved pairs (`label_source: judge:<judge>`) are pairs the curators left level"
    " (the same tier, or one unrated; never a reject) that a pairwise judge ordered the same"
    " way with either painting shown first; a pair any judge saw the other way is left out."
)


def judged_pairs(
    store: Store,
    candidates: dict[int, PoolEntry],  # accepted, with a program, of the release's photos
    photos: dict[int, Photo],
    prompts: dict[int, list[dict[str, Any]]],
    references: dict[int, list[str]],
) -> list[dict[str, Any]]:
    by_png = {
        e.candidate.png_sha: e
        for e in candidates.values()
        if e.candidate.png_sha and e.tier != "reject"
    }
    winners: dict[tuple[int, int], set[int]] = {}
    judges: dict[tuple[int, int], set[str]] = {}
    for pair in calibration.all_pairs(store):
        x, y = by_png.get(pair.x_sha), by_png.get(pair.y_sha)
        if x is None or y is None or x.id == y.id or pair.score not in (0.0, 1.0):
            continue  # not two of these programs, or the two orders disagreed
        if x.candidate.photo_id != y.candidate.photo_id or _curators_order(x, y):
            continue
        key = (min(x.id, y.id), max(x.id, y.id))
        winners.setdefault(key, set()).add(x.id if pair.score == 1.0 else y.id)
        judges.setdefault(key, set()).add(pair.judge)
    out = []
    for key in sorted(winners):
        if len(winners[key]) != 1:
            continue  # the judges disagree
        better = candidates[next(iter(winners[key]))]
        worse = candidates[key[0] if better.id == key[1] else key[1]]
        pid = better.candidate.photo_id
        out.append(
            {
                "prompt": prompts[pid],
                "chosen": [{"role": "assistant", "content": fenced(_program(store, better))}],
                "rejected": [{"role": "assistant", "content": fenced(_program(store, worse))}],
                "chosen_candidate_id": better.id,
                "rejected_candidate_id": worse.id,
                "chosen_tier": better.tier or "unrated",
                "rejected_tier": worse.tier or "unrated",
                "label_source": "judge:" + ",".join(sorted(judges[key])),
                "subject": photos[pid].subject,
                "reference_photo": photos[pid].file_name,
                "references_file_names": references[pid],
            }
        )
    return out


def _curators_order(a: PoolEntry, b: PoolEntry) -> bool:
    return a.tier is not None and b.tier is not None and a.tier != b.tier


def _program(store: Store, e: PoolEntry) -> str:
    return store.program_source(e.candidate.program_sha or "")
