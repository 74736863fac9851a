"""Judge verdicts, the calibration ladder and preference scores: schema (m007) and records.

Three tables, all keyed so a rerun finds what it already has:
  judge_pairs        one pair of PNGs judged in both orders by one judge (x shown first, then y)
  calibrations       the latest ladder entry per candidate: the policy's win rate against it
  preference_scores  a preference model's reward per candidate (HPSv3: mu and sigma)
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the store imports this module's migration; avoid the cycle at runtime
    from refpool.core.store.db import Store

_SCHEMA = """
CREATE TABLE judge_pairs (
    judge TEXT NOT NULL,             -- judge key: model id + prompt hash, or heuristic#vN
    x_sha TEXT NOT NULL,             -- the PNG scored (a policy painting, a curator's love)
    y_sha TEXT NOT NULL,             -- the PNG it is held against (a candidate, an okay)
    x_first TEXT,                    -- winning slot with x shown first: A, B, or NULL (no verdict)
    y_first TEXT,                    -- winning slot with y shown first
    score REAL,                      -- x's score: 1 won both, 0 lost both, 0.5 orders disagree
    call_ids TEXT NOT NULL DEFAULT '[]',
    reasons TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (judge, x_sha, y_sha)
);
CREATE TABLE calibrations (
    candidate_id INTEGER PRIMARY KEY,
    judge TEXT NOT NULL,             -- display name of the judge
    judge_key TEXT NOT NULL,         -- its key in judge_pairs (model id + prompt hash)
    heuristic INTEGER NOT NULL,      -- 1: the offline heuristic judge, not a model
    win_rate REAL,                   -- the policy's mean score against this candidate
    resolved INTEGER NOT NULL,       -- comparisons where both orders gave a verdict
    position_bias INTEGER NOT NULL,  -- comparisons whose two orders disagreed (ties)
    ladder TEXT,                     -- ceiling | rung | free_win | NULL (nothing resolved)
    policy TEXT NOT NULL,            -- where the policy's paintings came from
    paintings TEXT NOT NULL,         -- JSON list of the painting PNG sha256s used
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX calibrations_ladder ON calibrations(ladder);
CREATE TABLE preference_scores (
    candidate_id INTEGER NOT NULL,
    scorer TEXT NOT NULL,            -- the scorer's name in the models file, e.g. hpsv3
    png_sha TEXT NOT NULL,
    prompt TEXT NOT NULL,
    hpsv3_mu REAL NOT NULL,
    hpsv3_sigma REAL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (candidate_id, scorer)
)
"""


def m007_calibration(db: sqlite3.Connection) -> None:
    """Pool as a reward signal: pairwise judge verdicts, the ladder, preference scores."""
    for statement in _SCHEMA.split(";\n"):
        if statement.strip():
            db.execute(statement)


# -- judge pairs -----------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgedPair:
    judge: str
    x_sha: str
    y_sha: str
    x_first: str | None  # "A" means x won when shown first
    y_first: str | None  # "B" means x won when shown second
    score: float | None  # None: an order gave no verdict, so the pair is unresolved
    call_ids: tuple[int, ...] = ()
    reasons: tuple[str, ...] = ()

    @property
    def resolved(self) -> bool:
        return self.score is not None

    @property
    def position_bias(self) -> bool:
        """Both orders answered and picked the same slot: the judge followed the position."""
        return self.resolved and self.x_first == self.y_first


def save_pair(store: Store, pair: JudgedPair) -> None:
    row = (
        pair.judge,
        pair.x_sha,
        pair.y_sha,
        pair.x_first,
        pair.y_first,
        pair.score,
        json.dumps(list(pair.call_ids)),
        json.dumps(list(pair.reasons)),
    )
    with store.write_lock:
        store.db.execute(
            "INSERT OR REPLACE INTO judge_pairs (judge, x_sha, y_sha, x_first, y_first, score,"
            " call_ids, reasons) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )


def get_pair(store: Store, judge: str, x_sha: str, y_sha: str) -> JudgedPair | None:
    rows = store.query(
        "SELECT * FROM judge_pairs WHERE judge = ? AND x_sha = ? AND y_sha = ?",
        (judge, x_sha, y_sha),
    )
    return _pair(rows[0]) if rows else None


def pairs_of(store: Store, judge: str) -> list[JudgedPair]:
    return [_pair(r) for r in store.query("SELECT * FROM judge_pairs WHERE judge = ?", (judge,))]


def all_pairs(store: Store) -> list[JudgedPair]:
    """Every stored verdict of every judge (a release's judge-resolved training pairs)."""
    return [_pair(r) for r in store.query("SELECT * FROM judge_pairs ORDER BY rowid")]


def _pair(row: sqlite3.Row) -> JudgedPair:
    return JudgedPair(
        judge=row["judge"],
        x_sha=row["x_sha"],
        y_sha=row["y_sha"],
        x_first=row["x_first"],
        y_first=row["y_first"],
        score=row["score"],
        call_ids=tuple(json.loads(row["call_ids"])),
        reasons=tuple(json.loads(row["reasons"])),
    )


# -- the ladder ------------------------------------------------------------------------------
@dataclass(frozen=True)
class LadderEntry:
    candidate_id: int
    judge: str
    heuristic: bool
    win_rate: float | None
    resolved: int
    position_bias: int
    ladder: str | None  # ceiling | rung | free_win; None when no comparison resolved
    policy: str = ""
    paintings: tuple[str, ...] = ()
    judge_key: str = ""
    updated_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate_id": self.candidate_id,
            "judge": self.judge,
            "heuristic": self.heuristic,
            "win_rate": self.win_rate,
            "resolved": self.resolved,
            "position_bias": self.position_bias,
            "ladder": self.ladder,
            "policy": self.policy,
            "paintings": list(self.paintings),
            "judge_key": self.judge_key,
            "updated_at": self.updated_at,
        }


def save_ladder_entry(store: Store, entry: LadderEntry) -> None:
    row = (
        entry.candidate_id,
        entry.judge,
        int(entry.heuristic),
        entry.win_rate,
        entry.resolved,
        entry.position_bias,
        entry.ladder,
        entry.policy,
        json.dumps(list(entry.paintings)),
        entry.judge_key,
    )
    with store.write_lock:
        store.db.execute(
            "INSERT OR REPLACE INTO calibrations (candidate_id, judge, heuristic, win_rate,"
            " resolved, position_bias, ladder, policy, paintings, judge_key)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )


def ladder(store: Store, ids: list[int] | None = None) -> dict[int, LadderEntry]:
    """candidate id -> its latest ladder entry (every calibrated candidate, or just `ids`)."""
    if ids is None:
        rows = store.query("SELECT * FROM calibrations")
    else:
        rows = store.query_in("SELECT * FROM calibrations WHERE candidate_id IN ({marks})", ids)
    out = {}
    for r in rows:
        out[r["candidate_id"]] = LadderEntry(
            candidate_id=r["candidate_id"],
            judge=r["judge"],
            heuristic=bool(r["heuristic"]),
            win_rate=r["win_rate"],
            resolved=r["resolved"],
            position_bias=r["position_bias"],
            ladder=r["ladder"],
            policy=r["policy"],
            paintings=tuple(json.loads(r["paintings"])),
            judge_key=r["judge_key"],
            updated_at=r["updated_at"],
        )
    return out


def ladder_classes(store: Store, ids: list[int] | None = None) -> dict[int, str]:
    """candidate id -> ceiling | rung | free_win, from the latest calibration of each."""
    return {cid: e.ladder for cid, e in ladder(store, ids).items() if e.ladder is not None}


# -- preference scores -----------------------------------------------------------------------
@dataclass(frozen=True)
class PreferenceRow:
    candidate_id: int
    scorer: str
    png_sha: str
    prompt: str
    hpsv3_mu: float
    hpsv3_sigma: float | None


def save_preference(store: Store, row: PreferenceRow) -> None:
    with store.write_lock:
        store.db.execute(
            "INSERT OR REPLACE INTO preference_scores (candidate_id, scorer, png_sha, prompt,"
            " hpsv3_mu, hpsv3_sigma) VALUES (?, ?, ?, ?, ?, ?)",
            (row.candidate_id, row.scorer, row.png_sha, row.prompt, row.hpsv3_mu, row.hpsv3_sigma),
        )


def preferences(store: Store, scorer: str | None = None) -> dict[int, PreferenceRow]:
    """candidate id -> its preference score (the latest scorer's, unless `scorer` is named)."""
    sql = "SELECT * FROM preference_scores"
    params: tuple[Any, ...] = ()
    if scorer is not None:
        sql, params = sql + " WHERE scorer = ?", (scorer,)
    out = {}
    for r in store.query(sql + " ORDER BY created_at", params):
        out[r["candidate_id"]] = PreferenceRow(
            candidate_id=r["candidate_id"],
            scorer=r["scorer"],
            png_sha=r["png_sha"],
            prompt=r["prompt"],
            hpsv3_mu=r["hpsv3_mu"],
            hpsv3_sigma=r["hpsv3_sigma"],
        )
    return out
