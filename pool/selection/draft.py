"""Selection: rated candidates -> a draft pool under stated constraints, every exclusion explained.

Order of the checks for each candidate (the first that fails is the reason given):
  0. its photo was withdrawn (`refpool photos withdraw`): the withdrawal's reason is given
  1-3. pool.catalog.ineligibility: unrated or reject, not accepted by the gate (or no PNG),
       photo without an open licence or attribution
  4. its PNG is gone and its current features were never cached (nothing left to compare)
  5. near-duplicate of an already chosen candidate (pool/similarity/distance.py distance <= dup_threshold)
  6. photo cap, model cap
  7. tier mix: that tier's quota (target x love_fraction love, target x rung_fraction rung,
     the rest okay) is full
A candidate that calibration (pool/reward/ladder.py) put in the rung band goes in the rung tier when
rung_fraction > 0, rated or not (a curator's reject still vetoes it); otherwise rung is empty.
Eligible candidates are visited best-first within each tier (more love votes, more curators,
higher critic score, later round, lower id), the two tiers interleaved so that neither uses
up the photo and model caps first.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from pool.catalog import INELIGIBLE, PoolEntry, ineligibility, load_entries
from pool.similarity import distance as similarity
from pool.similarity.features import load_features, measurable
from refpool.core import defaults
from refpool.core.contracts import PoolVersion
from refpool.core.errors import RefpoolError
from refpool.core.store import Store
from refpool.core.store.calibration import ladder_classes
from refpool.core.store.photo_corrections import withdrawn

# Calibrated with `python -m pool.similarity.threshold` on rendered chains (see refpool/core/defaults.py).
DEFAULT_DUP_THRESHOLD = defaults.DUP_THRESHOLD
DEFAULT_TARGET = defaults.TARGET_POOL_SIZE
DEFAULT_LOVE_FRACTION = defaults.LOVE_FRACTION

REASONS = {
    "withdrawn_photo": "its photo was withdrawn",
    **INELIGIBLE,
    "png_missing": "its PNG file is missing from the store",
    "near_duplicate": "near-duplicate of a chosen candidate",
    "photo_cap": "its photo already has max-per-photo candidates",
    "model_cap": "its model already has max-per-model candidates",
    "tier_mix": "its tier's quota is full",
}


class SelectionError(RefpoolError, ValueError):
    """Bad parameters, or nothing at all can go in the pool."""


MAX_COUNT = 100_000  # a target or cap beyond this is a typo (1e12), not a pool


def check_count(name: str, count: float) -> None:
    """Refuse a target or cap past MAX_COUNT; `name` is the value as the user's shell calls it
    (the command line's "the target pool size", the studio's "Target size")."""
    if count > MAX_COUNT:
        raise SelectionError(
            f"{name} must be at most {MAX_COUNT:,}, not {count:,g}: a pool is a few hundred"
            " references (178 in the published run)"
        )


@dataclass(frozen=True)
class Exclusion:
    candidate_id: int
    reason: str  # a key of REASONS
    detail: str  # for people; it may name a photo, a model or a curator
    other_id: int | None = None
    distance: float | None = None  # pool/similarity/distance.py, 0..100
    # Structured facts, so that blind mode can word an exclusion without any name in it.
    photo_id: int | None = None
    model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The draft format's keys (photo_id and model stay in memory: the format predates them)."""
        return {
            "candidate_id": self.candidate_id,
            "reason": self.reason,
            "detail": self.detail,
            "other_id": self.other_id,
            "distance": self.distance,
        }


def _excluded(entry: PoolEntry, reason: str, detail: str, **more: Any) -> Exclusion:
    c = entry.candidate
    return Exclusion(c.id, reason, detail, photo_id=c.photo_id, model=c.generator, **more)


@dataclass
class PoolDraft:
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
        total, love, okay = len(self.candidate_ids), self.count("love"), self.count("okay")
        return {
            "candidate_ids": self.candidate_ids,
            "tiers": {str(k): v for k, v in self.tiers.items()},
            "excluded": [e.to_dict() for e in self.excluded],
            "params": self.params,
            "warnings": self.warnings,
            "counts": {"total": total, "love": love, "okay": okay},
            "excluded_counts": {k: len(v) for k, v in self.reasons().items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PoolDraft:
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
        rung = f", rung {self.count('rung')}" if self.count("rung") else ""
        lines = [
            f"draft: {len(self.candidate_ids)} candidates (love {self.count('love')},"
            f" okay {self.count('okay')}{rung}); target {self.params['target']}"
        ]
        for reason, items in self.reasons().items():
            lines.append(f"  left out, {REASONS[reason]}: {len(items)}")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _rank_key(entry: PoolEntry) -> tuple[int, int, float, int, int]:
    votes = Counter(entry.votes.values())
    scores = entry.candidate.critique.scores if entry.candidate.critique else {}
    critic = sum(scores.values()) / len(scores) if scores else 0.0
    return (-votes["love"], -len(entry.votes), -critic, -entry.candidate.round, entry.id)


def _check_params(
    target: int,
    max_per_photo: int | None,
    max_per_model: int | None,
    love_fraction: float,
    dup_threshold: float,
    rung_fraction: float = 0.0,
) -> None:
    if target < 1:
        raise SelectionError(f"the target pool size must be at least 1 (got {target})")
    check_count("the target pool size", target)
    for name, cap in (("photo", max_per_photo), ("model", max_per_model)):
        if cap is not None and cap < 1:
            raise SelectionError(
                f"the cap per {name} must be at least 1, or none for no cap (got {cap})"
            )
        if cap is not None:
            check_count(f"the cap per {name}", cap)
    if not 0.0 <= love_fraction <= 1.0:
        raise SelectionError(f"the love fraction must lie in 0..1 (got {love_fraction})")
    if not 0.0 <= rung_fraction <= 1.0 - love_fraction + 1e-9:
        raise SelectionError(
            f"the rung share must lie in 0..{1 - love_fraction:g} (love takes {love_fraction:g});"
            f" got {rung_fraction}"
        )
    if not 0 <= dup_threshold <= 100:
        raise SelectionError(
            f"the near-duplicate threshold is a similarity distance in 0..100 (got {dup_threshold});"
            f" the calibrated default is {DEFAULT_DUP_THRESHOLD}"
        )


def _split_eligible(
    store: Store, entries: dict[int, PoolEntry], rungs: frozenset[int] | set[int] = frozenset()
) -> tuple[list[PoolEntry], list[Exclusion]]:
    """Eligible entries (those in `rungs` re-tiered as rung) and the explained rest."""
    eligible: list[PoolEntry] = []
    excluded: list[Exclusion] = []
    gone = withdrawn(store)  # photo id -> why it was withdrawn
    for entry in entries.values():
        if entry.id in rungs and entry.tier != "reject":
            entry = replace(entry, tier="rung")
        why = ineligibility(entry)
        if entry.candidate.photo_id in gone:
            photo = entry.photo
            why = (
                "withdrawn_photo",
                f"photo {photo.id} ({photo.file_name}) was withdrawn: {gone[photo.id]}",
            )
        sha = entry.candidate.png_sha or ""
        # Features cached by an older FEATURE_VERSION lack the near-duplicate signature.
        if why is None and not measurable(store, sha):
            # no server path: the detail is shown to curators in the studio
            why = ("png_missing", f"its render (PNG {sha[:12]}) is missing from the data directory")
        if why:
            excluded.append(_excluded(entry, *why))
        else:
            eligible.append(entry)
    return eligible, excluded


def build_pool(
    store: Store,
    target: int = DEFAULT_TARGET,
    max_per_photo: int | None = None,
    max_per_model: int | None = None,
    love_fraction: float = DEFAULT_LOVE_FRACTION,
    dup_threshold: float = DEFAULT_DUP_THRESHOLD,
    progress: bool = False,
    rung_fraction: float = 0.0,
) -> PoolDraft:
    """Choose up to `target` candidates; raise SelectionError if none at all is eligible."""
    _check_params(target, max_per_photo, max_per_model, love_fraction, dup_threshold, rung_fraction)
    params = {
        "target": target,
        "max_per_photo": max_per_photo,
        "max_per_model": max_per_model,
        "love_fraction": love_fraction,
        "dup_threshold": dup_threshold,
    }
    if rung_fraction:  # only then, so drafts without rungs keep their old parameters
        params["rung_fraction"] = rung_fraction
    entries = load_entries(store)
    if not entries:
        raise SelectionError(
            "the pool is empty: the store has no candidates. Generate some (refpool generate ...)"
            " and rate them in the studio first."
        )
    ladder = ladder_classes(store) if rung_fraction else {}
    rungs = {cid for cid, cls in ladder.items() if cls == "rung"}
    eligible, excluded = _split_eligible(store, entries, rungs)
    if not eligible:
        counts = Counter(e.reason for e in excluded)
        detail = ", ".join(f"{n} {REASONS[r]}" for r, n in counts.most_common())
        raise SelectionError(
            f"no candidate can go in the pool ({len(entries)} candidates: {detail})."
            " Rate candidates love or okay in the studio, and check photo licences."
        )

    # Every eligible entry has a PNG (the gate check) whose features exist or can be computed.
    shas = {e.id: e.candidate.png_sha or "" for e in eligible}
    feats = load_features(store, shas.values(), progress=progress)
    love_quota = round(target * love_fraction)
    rung_quota = min(round(target * rung_fraction), target - love_quota)
    quota = {"love": love_quota, "okay": target - love_quota - rung_quota}
    if rung_fraction:
        quota["rung"] = rung_quota
    queues = {t: sorted((e for e in eligible if e.tier == t), key=_rank_key) for t in quota}
    chosen: list[PoolEntry] = []
    chosen_sigs: list[similarity.Signature] = []
    per_photo: Counter[int] = Counter()
    per_model: Counter[str] = Counter()
    filled: Counter[str] = Counter()
    pos = {t: 0 for t in quota}

    while True:
        open_tiers = [t for t in quota if pos[t] < len(queues[t]) and filled[t] < quota[t]]
        if not open_tiers:
            break
        tier = min(open_tiers, key=lambda t: (filled[t] / max(quota[t], 1), t))
        entry = queues[tier][pos[tier]]
        pos[tier] += 1
        c = entry.candidate
        sig = feats[shas[entry.id]].signature
        if chosen_sigs:
            dists = similarity.distances_to(sig, chosen_sigs)
            k = int(dists.argmin())
            if float(dists[k]) <= dup_threshold:
                other, d = chosen[k].id, round(float(dists[k]), 1)
                text = f"near-duplicate of {other} at distance {d}"
                excluded.append(
                    _excluded(entry, "near_duplicate", text, other_id=other, distance=d)
                )
                continue
        if max_per_photo is not None and per_photo[c.photo_id] >= max_per_photo:
            text = f"photo {c.photo_id} ({entry.photo.file_name}) already has {max_per_photo}"
            excluded.append(_excluded(entry, "photo_cap", text))
            continue
        if max_per_model is not None and per_model[c.generator] >= max_per_model:
            text = f"model {c.generator} already has {max_per_model}"
            excluded.append(_excluded(entry, "model_cap", text))
            continue
        chosen.append(entry)
        chosen_sigs.append(sig)
        per_photo[c.photo_id] += 1
        per_model[c.generator] += 1
        filled[tier] += 1

    for tier, queue in queues.items():
        for entry in queue[pos[tier] :]:
            text = f"{tier} quota of {quota[tier]} is full"
            excluded.append(_excluded(entry, "tier_mix", text))

    excluded.sort(key=lambda e: e.candidate_id)
    chosen.sort(key=lambda e: e.id)
    return PoolDraft(
        candidate_ids=[e.id for e in chosen],
        tiers={e.id: str(e.tier) for e in chosen},
        excluded=excluded,
        params=params,
        warnings=_warnings(target, quota, filled, len(chosen)),
    )


def _warnings(target: int, quota: dict[str, int], filled: Counter[str], chosen: int) -> list[str]:
    warnings = []
    for tier in quota:
        if filled[tier] < quota[tier]:
            warnings.append(
                f"only {filled[tier]} {tier} candidates fit the constraints (quota {quota[tier]});"
                + (
                    " calibrate against more policy paintings (refpool pool calibrate)"
                    if tier == "rung"
                    else " rate more, loosen the caps, or change the love fraction"
                )
            )
        if tier != "rung" and quota[tier] > 0 and filled[tier] < 2:
            warnings.append(
                f"fewer than 2 {tier} references: the RL env samples 2 love + 2 okay per comparison"
            )
    if chosen < target:
        warnings.append(f"target {target} not reached: the draft has {chosen}")
    return warnings


# -- drafts in the store --------------------------------------------------------------------
def save_draft(store: Store, draft: PoolDraft) -> int:
    return store.insert("pool_drafts", {"params": draft.params, "draft": draft.to_dict()})


def latest_draft(store: Store) -> PoolDraft | None:
    rows = store.query("SELECT draft FROM pool_drafts ORDER BY id DESC LIMIT 1")
    return PoolDraft.from_dict(json.loads(rows[0]["draft"])) if rows else None
