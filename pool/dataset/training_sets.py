"""The training sets a release carries beside its references, in the conversational formats
TRL's trainers read ({"role", "content"} messages):

    sft.jsonl         prompt -> completion: the coder's prompt for a photo, then the program
                      that painted a love (optionally okay) reference, fenced as a reply
    preference.jsonl  prompt, chosen, rejected: two programs for the same photo that the
                      curators' tiers order (PREFERENCE_RULE)
    revisions.jsonl   messages: a critique chain as a conversation, ending with the program
                      that was released
    prompts.jsonl     prompt: one per photo in the release, for GRPO

Each is an extra config of the release's dataset (pool/dataset/training_card.py), frozen with
it. Each row names images already in `images/` (its `*_file_name(s)` column), which is what
lets the imagefolder loader the default config needs read these files as well. A rejected
painting never becomes a file: it appears as program text only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import permutations
from typing import Any

from pool.catalog import PoolEntry, load_entries
from pool.dataset.training_judged import judged_pairs
from pool.dataset.training_prompts import (
    TrainingOptions,
    coder_prompt,
    fenced,
    photo_bytes,
    photo_path,
    revision_turn,
)
from refpool.core.contracts import POOL_TIERS, Candidate, Photo, ReleaseRow
from refpool.core.store import Store, candidates

CONFIG_FILES = {
    "sft": "sft.jsonl",
    "preference": "preference.jsonl",
    "revisions": "revisions.jsonl",
    "prompts": "prompts.jsonl",
}
TRAINER = {
    "sft": "SFTTrainer (prompt-completion)",
    "preference": "DPOTrainer (preference: prompt, chosen, rejected)",
    "revisions": "SFTTrainer (multi-turn messages)",
    "prompts": "GRPOTrainer (prompt-only)",
}
SHOWS_PHOTO = ("sft", "prompts")  # the configs that carry the photo when a release shows it
TIER_RANK = {"love": 2, "okay": 1, "reject": 0}
PREFERENCE_RULE = (
    "A pair is two programs for the same photo whose final tiers differ (love over okay, okay"
    " over reject, love over reject; the final tier is the curators' rule: any reject makes"
    " reject, else love when love votes outnumber okay). Ties (the same final tier) are left"
    " out, and so is every pair that any curator who rated both programs put in the same tier"
    " or the other way round (a disagreement). Programs not accepted by the gate are left out."
)


@dataclass
class TrainingSets:
    """The rows of each training config of one release (a config without rows is not listed)."""

    options: TrainingOptions
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    skipped_chains: int = 0  # critique chains with a round that left no program
    photo_files: list[tuple[str, bytes]] = field(default_factory=list)  # photos/ when shown

    def files(self) -> list[tuple[str, bytes]]:
        """(path, bytes) of every config that has rows, as the release folder holds them."""
        sets = [
            (CONFIG_FILES[name], _jsonl(rows))
            for name, rows in self.rows.items()
            if rows and name in CONFIG_FILES
        ]
        return sets + self.photo_files

    def counts(self) -> dict[str, int]:
        return {name: len(self.rows.get(name, [])) for name in CONFIG_FILES}


def _jsonl(rows: Iterable[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def build_training_sets(
    store: Store,
    entries: list[PoolEntry],
    rows: list[ReleaseRow],
    options: TrainingOptions | None = None,
) -> TrainingSets:
    """Every training config of a release: `entries` carry their release tiers and `rows` are
    their metadata rows, in the same order."""
    options = options or TrainingOptions()
    photos = {e.photo.id: e.photo for e in entries}
    released = {r.candidate_id: r for r in rows}
    references: dict[int, list[str]] = {}
    for e in entries:
        references.setdefault(e.photo.id, []).append(released[e.id].file_name)
    prompts = {pid: coder_prompt(store, photo, options) for pid, photo in photos.items()}
    sets = TrainingSets(options)
    # With photos, `sft` and `prompts` ask in TRL's vision form and carry the photo itself.
    shown = prompts
    if options.photos:
        shown = {pid: coder_prompt(store, p, options, sees_photo=True) for pid, p in photos.items()}
        sets.photo_files = [(photo_path(p), photo_bytes(store, p)) for p in photos.values()]
    sets.rows["sft"] = _sft(entries, released, shown, options)
    library = load_entries(store)  # every candidate with its curators' tiers, read once
    sets.rows["preference"] = _preference(store, library, photos, prompts, references, options)
    sets.rows["revisions"] = _revisions(store, library, entries, released, prompts, sets)
    sets.rows["prompts"] = [
        {
            "prompt": shown[pid],
            "subject": photo.subject,
            "reference_photo": photo.file_name,
            "references_file_names": references[pid],
            **({"images_file_names": [photo_path(photo)]} if options.photos else {}),
        }
        for pid, photo in sorted(photos.items(), key=lambda kv: kv[1].file_name)
    ]
    return sets


def _sft(
    entries: list[PoolEntry],
    released: dict[int, ReleaseRow],
    prompts: dict[int, list[dict[str, Any]]],
    options: TrainingOptions,
) -> list[dict[str, Any]]:
    taught = POOL_TIERS if options.sft_okay else ("love",)
    out = []
    for e in entries:
        row = released[e.id]
        if row.tier not in taught:
            continue
        reply: str | list[dict[str, str]] = fenced(row.program_source)
        if options.photos:  # TRL's vision form: every message's content is a list of parts
            reply = [{"type": "text", "text": fenced(row.program_source)}]
        out.append(
            {
                "prompt": prompts[e.photo.id],
                "completion": [{"role": "assistant", "content": reply}],
                "painting_file_name": row.file_name,
                "source_file": row.source_file,
                "candidate_id": row.candidate_id,
                "tier": row.tier,
                "subject": row.subject,
                "reference_photo": row.reference_photo,
                "generator_model": row.generator_model,
                "refinement_round": row.refinement_round,
                **({"images_file_names": [photo_path(e.photo)]} if options.photos else {}),
            }
        )
    return out


def ordered_pair(better: PoolEntry, worse: PoolEntry) -> bool:
    """Whether PREFERENCE_RULE puts `better` as chosen over `worse` (same photo assumed)."""
    if better.tier not in TIER_RANK or worse.tier not in TIER_RANK:
        return False
    if TIER_RANK[better.tier] <= TIER_RANK[worse.tier]:
        return False
    for curator in set(better.votes) & set(worse.votes):
        a, b = better.votes[curator], worse.votes[curator]
        if a in TIER_RANK and b in TIER_RANK and TIER_RANK[a] <= TIER_RANK[b]:
            return False  # this curator saw them level, or the other way round
    return True


def _preference(
    store: Store,
    library: dict[int, PoolEntry],
    photos: dict[int, Photo],
    prompts: dict[int, list[dict[str, Any]]],
    references: dict[int, list[str]],
    options: TrainingOptions,
) -> list[dict[str, Any]]:
    programs = {
        cid: e
        for cid, e in library.items()
        if e.candidate.photo_id in photos and e.candidate.program_sha and e.candidate.accepted
    }
    rated: dict[int, list[PoolEntry]] = {}
    for e in programs.values():
        if e.tier in TIER_RANK:
            rated.setdefault(e.candidate.photo_id, []).append(e)
    out = []
    for pid in sorted(rated, key=lambda p: photos[p].file_name):
        for better, worse in permutations(rated[pid], 2):
            if not ordered_pair(better, worse):
                continue
            chosen = store.program_source(better.candidate.program_sha or "")
            rejected = store.program_source(worse.candidate.program_sha or "")
            out.append(
                {
                    "prompt": prompts[pid],
                    "chosen": [{"role": "assistant", "content": fenced(chosen)}],
                    "rejected": [{"role": "assistant", "content": fenced(rejected)}],
                    "chosen_candidate_id": better.id,
                    "rejected_candidate_id": worse.id,
                    "chosen_tier": better.tier,
                    "rejected_tier": worse.tier,
                    "label_source": "curators",
                    "subject": photos[pid].subject,
                    "reference_photo": photos[pid].file_name,
                    "references_file_names": references[pid],
                }
            )
    if options.judge_pairs:
        out += judged_pairs(store, programs, photos, prompts, references)
    return out


def _revisions(
    store: Store,
    library: dict[int, PoolEntry],
    entries: list[PoolEntry],
    released: dict[int, ReleaseRow],
    prompts: dict[int, list[dict[str, Any]]],
    sets: TrainingSets,
) -> list[dict[str, Any]]:
    tiers = {cid: e.tier for cid, e in library.items()}
    out = []
    for e in entries:
        chain = candidates.chain(store, e.id, descendants=False)
        if len(chain) < 2:
            continue  # a first-round painting: no critique led to it (it is in `sft`)
        if any(not c.program_sha for c in chain):
            sets.skipped_chains += 1
            continue
        messages = list(prompts[e.photo.id])
        for i, c in enumerate(chain):
            program = store.program_source(c.program_sha or "")
            messages.append({"role": "assistant", "content": fenced(program)})
            if i < len(chain) - 1:
                messages.append({"role": "user", "content": revision_turn(c, _render(c, released))})
        row = released[e.id]
        out.append(
            {
                "messages": messages,
                "candidate_ids": [c.id for c in chain],
                "draft_tiers": [tiers.get(c.id) or "unrated" for c in chain],
                "render_sha256": [c.png_sha or "" for c in chain],
                "painting_file_name": row.file_name,
                "source_file": row.source_file,
                "tier": row.tier,
                "subject": row.subject,
                "generator_model": row.generator_model,
            }
        )
    return out


def _render(c: Candidate, released: dict[int, ReleaseRow]) -> str:
    """How a revision turn names the render it critiques: its file when it is a reference."""
    if c.id in released:
        return f"render: {released[c.id].file_name}"
    if c.png_sha:
        return f"render sha256 {c.png_sha}"
    return "it produced no image"
