"""Judge repeats: schema (m017) and records. The same pair asked again, to see if the judge
gives the same verdict twice.

  judge_repeats  one pair judged again in both orders (repeat 1, 2, ...): the verdicts of the
                 first asking stay in judge_pairs; each repeat is a model call of its own (its
                 job key names the repeat), so a rerun reuses it and pays for nothing twice
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from refpool.core.store.calibration import JudgedPair

if TYPE_CHECKING:  # the store imports this module's migration; avoid the cycle at runtime
    from refpool.core.store.db import Store

_SCHEMA = """
CREATE TABLE judge_repeats (
    judge TEXT NOT NULL,             -- judge key, as in judge_pairs
    x_sha TEXT NOT NULL,
    y_sha TEXT NOT NULL,
    repeat INTEGER NOT NULL,         -- 1, 2, ...: the asking after the first (judge_pairs)
    x_first TEXT,                    -- winning slot with x shown first: A, B, or NULL
    y_first TEXT,                    -- winning slot with y shown first
    call_ids TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (judge, x_sha, y_sha, repeat)
)
"""


def m017_judge_repeats(db: sqlite3.Connection) -> None:
    """Pool: the judge asked again about the same pairs (flip rate, position bias)."""
    db.execute(_SCHEMA)


def save_repeat(store: Store, pair: JudgedPair, repeat: int) -> None:
    """Store one repeat of a pair (an unresolved one too: a rerun asks it again)."""
    row = (
        pair.judge,
        pair.x_sha,
        pair.y_sha,
        repeat,
        pair.x_first,
        pair.y_first,
        json.dumps(list(pair.call_ids)),
    )
    with store.write_lock:
        store.db.execute(
            "INSERT OR REPLACE INTO judge_repeats (judge, x_sha, y_sha, repeat, x_first,"
            " y_first, call_ids) VALUES (?, ?, ?, ?, ?, ?, ?)",
            row,
        )


def get_repeat(store: Store, judge: str, x_sha: str, y_sha: str, repeat: int) -> JudgedPair | None:
    rows = store.query(
        "SELECT * FROM judge_repeats WHERE judge = ? AND x_sha = ? AND y_sha = ? AND repeat = ?",
        (judge, x_sha, y_sha, repeat),
    )
    return _pair(rows[0]) if rows else None


def repeats_of(store: Store, judge: str, x_sha: str, y_sha: str) -> list[JudgedPair]:
    """Every stored repeat of one pair, in repeat order."""
    rows = store.query(
        "SELECT * FROM judge_repeats WHERE judge = ? AND x_sha = ? AND y_sha = ? ORDER BY repeat",
        (judge, x_sha, y_sha),
    )
    return [_pair(r) for r in rows]


def _pair(r: sqlite3.Row) -> JudgedPair:
    x_first, y_first = r["x_first"], r["y_first"]
    score = (
        None if x_first is None or y_first is None else ((x_first == "A") + (y_first == "B")) / 2
    )
    return JudgedPair(
        r["judge"],
        r["x_sha"],
        r["y_sha"],
        x_first,
        y_first,
        score,
        tuple(json.loads(r["call_ids"])),
    )
