"""Search, filter and sort a queue by what a candidate measured: coverage, the gate, the
critic's scores, notes and the calibration win rate (curation/queue.py builds the queue).

Coverage and the gate are measurements of the painting and its program, so a blind curator
may use them; critic scores and win rates come from models, so blind mode drops them (see
curation/studio.clean_filters), and a blind curator's note search reads only their own notes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from refpool.core.contracts import Candidate
from refpool.core.store import Store, calibration, candidates

if TYPE_CHECKING:
    from curation.queue import Filters

GATES = ("passed", "failed")
# sort name -> (what it reads, highest first?); model-derived ones are listed in MODEL_SORTS
SORTS: dict[str, tuple[str, bool]] = {
    "coverage (low first)": ("coverage", False),
    "coverage (high first)": ("coverage", True),
    "critic score (high first)": ("critic", True),
    "critic score (low first)": ("critic", False),
    "win rate (high first)": ("win_rate", True),
    "win rate (low first)": ("win_rate", False),
}
MODEL_SORTS = tuple(name for name, (field, _) in SORTS.items() if field != "coverage")


def critic_score(c: Candidate) -> float | None:
    """The mean of the critic's 0..10 scores (None without a critique)."""
    scores = list((c.critique.scores or {}).values()) if c.critique else []
    return sum(scores) / len(scores) if scores else None


def notes_matching(store: Store, text: str, curator: str | None) -> set[int]:
    """Candidates with a live note containing `text` (case-insensitive); only `curator`'s
    notes when one is named."""
    sql = "SELECT DISTINCT candidate_id FROM ratings WHERE undone = 0 AND instr(lower(note), ?)"
    params: tuple = (text.lower(),)
    if curator is not None:
        sql += " AND curator = ?"
        params += (curator,)
    return {int(r["candidate_id"]) for r in store.query(sql, params)}


def _within(value: float | None, low: float | None, high: float | None) -> bool:
    if low is None and high is None:
        return True
    if value is None:
        return False  # not measured: it cannot be in a range
    return (low is None or value >= low) and (high is None or value <= high)


def measured(store: Store, ids: list[int], f: Filters) -> dict[str, dict[int, float | None]]:
    """Each measurement a filter or the sort needs, per id (read once per queue)."""
    field = SORTS[f.sort][0] if f.sort in SORTS else None
    need = {
        "coverage": f.coverage_min is not None or f.coverage_max is not None,
        "critic": f.critic_min is not None,
        "win_rate": f.win_min is not None,
    }
    if field:
        need[field] = True
    out: dict[str, dict[int, float | None]] = {}
    if need["coverage"] or need["critic"]:
        found = candidates.get_many(store, ids)
        out["coverage"] = {i: c.coverage for i, c in found.items()}
        out["critic"] = {i: critic_score(c) for i, c in found.items()}
    if need["win_rate"]:
        out["win_rate"] = {i: e.win_rate for i, e in calibration.ladder(store, ids).items()}
    return out


def refine(store: Store, me: str, ids: list[int], f: Filters, own_notes: bool) -> list[int]:
    """`ids` narrowed by the measurement filters and the note search, in the chosen order."""
    if f.gate in GATES:
        passed = {c.id for c in candidates.get_many(store, ids).values() if c.accepted}
        ids = [i for i in ids if (i in passed) == (f.gate == "passed")]
    if f.note_text:
        hits = notes_matching(store, f.note_text, me if own_notes else None)
        ids = [i for i in ids if i in hits]
    values = measured(store, ids, f)
    ranges = (
        ("coverage", f.coverage_min, f.coverage_max),
        ("critic", f.critic_min, None),
        ("win_rate", f.win_min, None),
    )
    for name, low, high in ranges:
        if low is not None or high is not None:
            ids = [i for i in ids if _within(values[name].get(i), low, high)]
    if f.sort in SORTS:
        name, high_first = SORTS[f.sort]
        ids = sorted(ids, key=sort_key(values[name], high_first))
    return ids


def sort_key(values: dict[int, float | None], high_first: bool) -> Callable[[int], tuple]:
    """Unmeasured ones last, ties in id order."""

    def key(i: int) -> tuple:
        v = values.get(i)
        return (v is None, 0.0 if v is None else (-v if high_first else v), i)

    return key
