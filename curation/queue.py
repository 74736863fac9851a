"""The rating queue: which candidates a curator sees, in what order, and where they are.

Order is stable (candidate id; in blind mode a per-curator shuffle, curation/blind_ids.py;
or a chosen sort, curation/refine.py), so next/previous behave like pages of a book. "Unrated first"
is about the cursor: after a rating it jumps to the next candidate this curator has not
rated yet (skipped ones come back after everything else). The cursor lives in SQLite
(`curation_sessions`), so a reload or a crash resumes exactly where the curator was.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

from curation.ratings import final_tier, live_ratings, my_latest
from curation.refine import GATES, SORTS, refine
from refpool.core.contracts import RATING_TIERS
from refpool.core.defaults import TARGET_POOL_SIZE
from refpool.core.errors import InputError
from refpool.core.store import Store, calibration, candidates, photo_corrections

TIER_FILTERS = (*RATING_TIERS, "unrated")
# Calibration's classes (pool ladder): the policy's win rate against the candidate.
LADDER_FILTERS = ("ceiling", "rung", "free_win", "uncalibrated")


@dataclass(frozen=True)
class Filters:
    """What to show. Empty / None means "any"."""

    photo_id: int | None = None
    generator: str | None = None
    round: int | None = None
    tier: str | None = None  # final tier: love | okay | reject | unrated
    curator: str | None = None  # only candidates this curator has rated
    unrated_only: bool = False  # only candidates *I* have not rated
    disagreements: bool = False  # only candidates where curators' live tiers differ
    include_failed: bool = False  # also candidates that failed the gate (no render)
    ladder: str | None = None  # ceiling | rung | free_win | uncalibrated
    note_text: str | None = None  # only candidates whose notes contain this
    gate: str | None = None  # passed | failed
    coverage_min: float | None = None
    coverage_max: float | None = None
    critic_min: float | None = None  # the critic's mean score, 0..10
    win_min: float | None = None  # the calibration win rate, 0..1
    sort: str | None = None  # one of refine.SORTS; None: the queue's own order

    def to_json(self) -> str:
        # `is`, not `in`: round 0 equals False and must be kept
        return json.dumps(
            {k: v for k, v in asdict(self).items() if v is not None and v is not False}
        )

    @classmethod
    def from_json(cls, text: str | None) -> Filters:
        try:
            data = json.loads(text or "{}")
        except json.JSONDecodeError:
            return cls()
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def chips(self) -> list[str]:
        """The active filters in words, one per chip on the Rate tab ([] when none)."""
        named = (
            ("photo", self.photo_id),
            ("model", self.generator),
            ("round", self.round),
            ("final tier", self.tier),
            ("rated by", self.curator),
            ("ladder", self.ladder),
            ("note contains", self.note_text),
            ("gate", self.gate),
            ("coverage ≥", self.coverage_min),
            ("coverage ≤", self.coverage_max),
            ("critic score ≥", self.critic_min),
            ("win rate ≥", self.win_min),
            ("sorted by", self.sort),
        )
        out = [f"{label} {value}" for label, value in named if value is not None]
        if self.unrated_only:
            out.append("only ones I have not rated")
        if self.disagreements:
            out.append("only disagreements")
        if self.include_failed:
            out.append("failed ones too")
        return out

    def validate(self) -> Filters:
        if self.tier not in (None, *TIER_FILTERS):
            raise InputError(f"tier filter must be one of {', '.join(TIER_FILTERS)}")
        if self.ladder not in (None, *LADDER_FILTERS):
            raise InputError(f"ladder filter must be one of {', '.join(LADDER_FILTERS)}")
        if self.gate not in (None, *GATES):
            raise InputError(f"gate filter must be one of {', '.join(GATES)}")
        if self.sort not in (None, *SORTS):
            raise InputError(f"sort must be one of {', '.join(SORTS)}")
        return self


class Queue(list[int]):
    """Candidate ids in queue order; `rank` places an id that is not (or no longer) in it.
    Without a rank the order is the ids' own (a plain sorted list behaves the same)."""

    def __init__(self, ids: list[int], rank: Callable[[int], Any] | None = None) -> None:
        super().__init__(ids)
        self.rank = rank


def _place(ids: list[int], x: int) -> tuple[int, bool]:
    """(x's index, True) when queued, else (the index it would have, False)."""
    try:
        return ids.index(x), True
    except ValueError:
        pass
    rank = getattr(ids, "rank", None)
    if rank is None:
        return bisect.bisect_left(ids, x), False
    return bisect.bisect_left([rank(i) for i in ids], rank(x)), False


def build_queue(
    store: Store,
    me: str,
    filters: Filters = Filters(),
    order: Callable[[int], Any] | None = None,
    blind: bool = False,
) -> Queue:
    """Candidate ids matching the filters, in stable order: by `order` (a blind curator's
    shuffle) or by id, unless the filters choose a sort. `blind` limits the note search to
    the curator's own notes."""
    filters.validate()
    # failed: no render to look at, unless asked for
    shown_only = None if filters.include_failed or filters.gate == "failed" else True
    ids = candidates.list_ids(
        store,
        accepted=shown_only,
        rendered=shown_only,
        photo_id=filters.photo_id,
        generator=filters.generator,
        round=filters.round,
    )
    withdrawn = photo_corrections.withdrawn(store)
    if withdrawn:  # a withdrawn photo's paintings can enter no pool: no one is asked to rate them
        gone = candidates.ids_of_photos(store, withdrawn)
        ids = [i for i in ids if i not in gone]
    if filters.tier or filters.curator or filters.disagreements:
        votes = live_ratings(store)
        if filters.tier:
            want = None if filters.tier == "unrated" else filters.tier
            ids = [i for i in ids if final_tier(votes.get(i, {})) == want]
        if filters.curator:
            ids = [i for i in ids if filters.curator in votes.get(i, {})]
        if filters.disagreements:
            ids = [i for i in ids if len(set(votes.get(i, {}).values())) > 1]
    if filters.ladder:
        classes = {c: e.ladder for c, e in calibration.ladder(store, ids).items()}
        want = None if filters.ladder == "uncalibrated" else filters.ladder
        ids = [i for i in ids if classes.get(i) == want]
    if filters.unrated_only:
        mine = my_latest(store, me)
        ids = [i for i in ids if mine.get(i, "skip") == "skip"]
    if order is not None:
        ids = sorted(ids, key=order)
    ids = refine(store, me, ids, filters, own_notes=blind)
    return Queue(ids, None if filters.sort in SORTS else order)


def next_unrated(ids: list[int], mine: dict[int, str], after: int | None) -> int | None:
    """The next id after `after` (wrapping) I have not rated; then skipped ones; else None."""
    start = 0
    if after is not None:
        pos, queued = _place(ids, after)
        start = pos + 1 if queued else pos
    order = ids[start:] + ids[:start]
    for i in order:
        if i not in mine:
            return i
    for i in order:
        if mine.get(i) == "skip" and i != after:
            return i
    return None


def step(ids: list[int], current: int | None, delta: int) -> int | None:
    """Move `delta` places through the queue from `current` (which may have left it)."""
    if not ids:
        return None
    if current is None:
        return ids[0]
    pos, queued = _place(ids, current)
    if queued:
        pos += delta
    elif delta < 0:
        pos -= 1  # current left the queue: "previous" is the one before where it was
    return ids[max(0, min(len(ids) - 1, pos))]


# -- the stored cursor --------------------------------------------------------------------
def load_session(store: Store, curator: str) -> tuple[int | None, Filters]:
    rows = store.query(
        "SELECT candidate_id, filters FROM curation_sessions WHERE curator = ?", (curator,)
    )
    if not rows:
        return None, Filters()
    return rows[0]["candidate_id"], Filters.from_json(rows[0]["filters"])


def save_session(
    store: Store, curator: str, candidate_id: int | None, filters: Filters | None = None
) -> None:
    with store.write_lock:
        if filters is None:
            store.db.execute(
                "INSERT INTO curation_sessions (curator, candidate_id) VALUES (?, ?)"
                " ON CONFLICT(curator) DO UPDATE SET candidate_id = excluded.candidate_id,"
                " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
                (curator, candidate_id),
            )
        else:
            store.db.execute(
                "INSERT INTO curation_sessions (curator, candidate_id, filters) VALUES (?, ?, ?)"
                " ON CONFLICT(curator) DO UPDATE SET candidate_id = excluded.candidate_id,"
                " filters = excluded.filters,"
                " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
                (curator, candidate_id, filters.to_json()),
            )


def resolve_current(
    ids: list[int], mine: dict[int, str], stored: int | None
) -> tuple[int | None, bool]:
    """Where the curator is: the stored candidate if still queued, else the next unrated.

    Returns (candidate id or None, moved) where `moved` says the stored one had gone.
    """
    if stored is not None:
        if _place(ids, stored)[1]:
            return stored, False
        return next_unrated(ids, mine, stored) or step(ids, stored, 0), True
    return next_unrated(ids, mine, None) or (ids[0] if ids else None), False


# -- progress ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Progress:
    total: int  # candidates in the current queue
    rated_by_me: int  # of those, rated by this curator (skips not counted)
    skipped_by_me: int
    love: int  # final tiers across the whole store (the pool being built)
    okay: int
    reject: int
    target: int
    blind: bool = False  # pool counts come from everyone's ratings: not shown blind

    @property
    def pool(self) -> int:
        return self.love + self.okay

    def fraction(self) -> float:
        """What the progress bar fills: the pool towards its target (blind: my own ratings)."""
        if self.blind:
            return self.rated_by_me / self.total if self.total else 0.0
        return min(1.0, self.pool / self.target) if self.target else 0.0

    def text(self) -> str:
        mine = f"You rated {self.rated_by_me}/{self.total} in this queue" + (
            f" ({self.skipped_by_me} skipped)" if self.skipped_by_me else ""
        )
        if self.blind:
            return mine
        return (
            mine
            + f" · pool {self.love} love + {self.okay} okay = {self.pool}/{self.target}"
            + f" · {self.reject} rejected"
        )


def progress(
    store: Store, me: str, ids: list[int], target: int = TARGET_POOL_SIZE, blind: bool = False
) -> Progress:
    mine = my_latest(store, me)
    queued = set(ids)
    rated = sum(1 for i, t in mine.items() if i in queued and t != "skip")
    skipped = sum(1 for i, t in mine.items() if i in queued and t == "skip")
    if blind:
        return Progress(len(ids), rated, skipped, 0, 0, 0, target, blind=True)
    tiers = [final_tier(v) for v in live_ratings(store).values()]
    return Progress(
        total=len(ids),
        rated_by_me=rated,
        skipped_by_me=skipped,
        love=tiers.count("love"),
        okay=tiers.count("okay"),
        reject=tiers.count("reject"),
        target=target,
    )
