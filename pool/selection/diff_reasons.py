"""Why each reference entered, left or moved between two versions (`refpool pool diff`).

The reasons are read from what the store holds now, against what version A froze:
  entered  newly rated love/okay (by whom), calibrated into the rung band, or left out of A by
           its selection (A's draft says why) and chosen now
  left     its photo withdrawn (`refpool photos withdraw`, with the reason), re-rated reject (by whom), recalibrated out
           of the rung band, or left out of B's selection (near-duplicate of #N, a cap...)
  moved    a tier change: re-rated (by whom, from what), or calibration's band
A version's votes are the `curator_ratings` of its frozen rows; its selection's reasons are
those of the latest saved draft with exactly its tiers (none for a draft no longer kept).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from curation.ratings import latest_rating, live_ratings
from pool.catalog import ineligibility, load_entries
from pool.selection.draft import REASONS, Exclusion, PoolDraft, latest_draft
from refpool.core.contracts import RUNG
from refpool.core.store import Store, photo_corrections, releases
from refpool.core.store.calibration import ladder

DRAFT = "draft"


@dataclass(frozen=True)
class Change:
    candidate_id: int
    change: str  # entered | left | moved
    before: str | None  # its tier in A (None: not in A)
    after: str | None  # its tier in B
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        mark = {"entered": "+", "left": "-", "moved": "~"}[self.change]
        tiers = (
            f"{self.before} -> {self.after}"
            if self.change == "moved"
            else self.after or self.before
        )
        return f"  {mark} #{self.candidate_id} ({tiers}): {self.reason}"


def draft_with(store: Store, tiers: dict[int, str]) -> PoolDraft | None:
    """The latest saved draft that chose exactly `tiers` (the one a version was released from)."""
    for row in store.query("SELECT draft FROM pool_drafts ORDER BY id DESC"):
        data = json.loads(row["draft"])
        if {int(k): v for k, v in data["tiers"].items()} == tiers:
            return PoolDraft.from_dict(data)
    return None


def frozen_votes(store: Store, version: str) -> dict[int, dict[str, str]]:
    """candidate id -> {curator: tier} as version's rows froze them ({} for a draft)."""
    if version == DRAFT:
        return {}
    return {
        r.candidate_id: {v["curator"]: v["tier"] for v in r.curator_ratings}
        for r in releases.rows(store, version.removeprefix("v"))
    }


class _Reasons:
    """What the store says now about the candidates of one diff."""

    def __init__(self, store: Store, a: tuple[str, dict[int, str]], b: tuple[str, dict[int, str]]):
        self.store = store
        ids = sorted(set(a[1]) | set(b[1]))
        self.entries = load_entries(store, ids)
        self.live = live_ratings(store)
        self.ladder = ladder(store, ids)
        self.photos_withdrawn = photo_corrections.withdrawn(store)  # photo id -> why
        self.a_votes = frozen_votes(store, a[0])
        self.a_excluded = _exclusions(store, a[0], a[1])
        self.b_excluded = _exclusions(store, b[0], b[1])

    def rated(self, cid: int, tiers: tuple[str, ...]) -> list[str]:
        """'love by ana (date)' for each curator whose live vote is one of `tiers` and differs
        from what A froze for that candidate."""
        before = self.a_votes.get(cid, {})
        out = []
        for curator, tier in sorted(self.live.get(cid, {}).items()):
            if tier in tiers and before.get(curator) != tier:
                r = latest_rating(self.store, cid, curator)
                when = f" on {r.created_at[:10]}" if r and r.created_at else ""
                was = f", was {before[curator]}" if curator in before else ""
                out.append(f"{tier} by {curator}{when}{was}")
        return out

    def calibration(self, cid: int) -> str:
        e = self.ladder.get(cid)
        if e is None:
            return "no calibration recorded"
        rate = f"{e.win_rate:.2f}" if e.win_rate is not None else "unresolved"
        return f"policy win rate {rate} by judge {e.judge}: {e.ladder or 'unresolved'}"

    def entered(self, cid: int, tier: str) -> str:
        if tier == RUNG:
            return f"calibrated into the rung band ({self.calibration(cid)})"
        if rated := self.rated(cid, (tier,)):
            return "newly rated " + "; ".join(rated)
        if (why := self.a_excluded.get(cid)) is not None:
            return f"left out of the earlier selection ({why.detail}); chosen now"
        return f"rated {tier} before the earlier version; chosen by this selection"

    def left(self, cid: int, tier: str) -> str:
        entry = self.entries.get(cid)
        if entry is not None and (why := self.photos_withdrawn.get(entry.photo.id)):
            return f"its photo #{entry.photo.id} was withdrawn: {why}"
        if rejected := self.rated(cid, ("reject",)):
            return "re-rated " + "; ".join(rejected)
        if tier == RUNG and (self.ladder.get(cid) is None or self.ladder[cid].ladder != RUNG):
            return f"recalibrated out of the rung band ({self.calibration(cid)})"
        if (excluded := self.b_excluded.get(cid)) is not None:
            if excluded.reason == "near_duplicate" and excluded.other_id is not None:
                return f"near-duplicate of #{excluded.other_id} (distance {excluded.distance})"
            return f"{REASONS.get(excluded.reason, excluded.reason)}: {excluded.detail}"
        if entry is not None and (inelig := ineligibility(entry)):
            return inelig[1]
        return "not chosen by this selection (its draft is no longer kept, so no reason is known)"

    def moved(self, cid: int, before: str, after: str) -> str:
        if RUNG in (before, after):
            return f"calibration's band changed ({self.calibration(cid)})"
        if rated := self.rated(cid, (after,)):
            return "re-rated " + "; ".join(rated)
        votes = ", ".join(f"{c}: {t}" for c, t in sorted(self.live.get(cid, {}).items()))
        return f"the curators' votes now give {after} ({votes or 'none'})"


def _exclusions(store: Store, name: str, tiers: dict[int, str]) -> dict[int, Exclusion]:
    draft = latest_draft(store) if name == DRAFT else draft_with(store, tiers)
    return {e.candidate_id: e for e in draft.excluded} if draft else {}


def explain(
    store: Store, a: tuple[str, dict[int, str]], b: tuple[str, dict[int, str]]
) -> list[Change]:
    """Every change from version a to b, (name, tiers) each, with its reason."""
    why = _Reasons(store, a, b)
    at, bt = a[1], b[1]
    changes = [Change(c, "entered", None, bt[c], why.entered(c, bt[c])) for c in bt if c not in at]
    changes += [Change(c, "left", at[c], None, why.left(c, at[c])) for c in at if c not in bt]
    changes += [
        Change(c, "moved", at[c], bt[c], why.moved(c, at[c], bt[c]))
        for c in at
        if c in bt and at[c] != bt[c]
    ]
    return sorted(changes, key=lambda ch: (ch.candidate_id, ch.change))
