"""Candidate records: the one module that reads and writes the `candidates` table.

Every stage works with `refpool.core.contracts.Candidate`; nothing else writes SQL on candidates
(tests/test_layout.py checks this).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from refpool.core.contracts import Candidate, Critique, RoundResult, Violation
from refpool.core.store.db import Store

CHAIN_LIMIT = 10  # a refinement chain is 3 rounds; this only bounds a corrupt, cyclic one
# The columns a write may set (id and created_at are the database's own).
COLUMNS = frozenset(
    [
        "job_key",
        "run_id",
        "photo_id",
        "generator",
        "round",
        "seed",
        "parent_id",
        "program_sha",
        "render_id",
        "accepted",
        "coverage",
        "png_sha",
        "violations",
        "critique",
        "coder_call_id",
        "critic_call_id",
        "outcome",
        "infra_error",
    ]
)


def from_row(row: sqlite3.Row) -> Candidate:
    critique = json.loads(row["critique"]) if row["critique"] else None
    return Candidate(
        id=int(row["id"]),
        photo_id=int(row["photo_id"]),
        generator=row["generator"],
        round=int(row["round"]),
        seed=int(row["seed"]),
        program_sha=row["program_sha"],
        parent_id=row["parent_id"],
        run_id=row["run_id"],
        job_key=row["job_key"],
        render_id=row["render_id"],
        accepted=bool(row["accepted"]),
        coverage=row["coverage"],
        png_sha=row["png_sha"],
        violations=[Violation.from_dict(v) for v in json.loads(row["violations"] or "[]")],
        critique=_critique(critique),
        coder_call_id=row["coder_call_id"],
        critic_call_id=row["critic_call_id"],
        outcome=row["outcome"],
        infra_error=row["infra_error"],
        created_at=row["created_at"],
    )


def _critique(data: dict[str, Any] | None) -> Critique | None:
    if not data:
        return None
    known: dict[str, Any] = {
        k: data[k] for k in ("critic", "scores", "advice", "summary") if k in data
    }
    known.setdefault("critic", "critic")
    known.setdefault("scores", {})
    known.setdefault("advice", "")
    return Critique.from_dict(known)


# -- reads --------------------------------------------------------------------------------------
def get(store: Store, candidate_id: int) -> Candidate | None:
    rows = store.query("SELECT * FROM candidates WHERE id = ?", (candidate_id,))
    return from_row(rows[0]) if rows else None


def get_many(store: Store, ids: Iterable[int]) -> dict[int, Candidate]:
    """candidate id -> Candidate for the ids that exist, in id order."""
    return {c.id: c for c in _where_in(store, "id", sorted({int(i) for i in ids}))}


def by_job_key(store: Store, key: str) -> Candidate | None:
    rows = store.query("SELECT * FROM candidates WHERE job_key = ?", (key,))
    return from_row(rows[0]) if rows else None


def by_job_keys(store: Store, keys: Iterable[str]) -> list[Candidate]:
    return _where_in(store, "job_key", list(keys))


def list_candidates(
    store: Store,
    *,
    accepted: bool | None = None,
    rendered: bool | None = None,
    photo_id: int | None = None,
    generator: str | None = None,
    round: int | None = None,
) -> list[Candidate]:
    """Candidates matching every filter given, in id order."""
    sql, params = _filtered(
        "SELECT * FROM candidates", accepted, rendered, photo_id, generator, round
    )
    return [from_row(r) for r in store.query(sql, params)]


def list_ids(
    store: Store,
    *,
    accepted: bool | None = None,
    rendered: bool | None = None,
    photo_id: int | None = None,
    generator: str | None = None,
    round: int | None = None,
) -> list[int]:
    """Like `list_candidates`, ids only (the studio's queue is built from these)."""
    sql, params = _filtered(
        "SELECT id FROM candidates", accepted, rendered, photo_id, generator, round
    )
    return [int(r["id"]) for r in store.query(sql, params)]


def ids_of_photos(store: Store, photo_ids: Iterable[int]) -> set[int]:
    """The ids of every candidate painted from one of `photo_ids`."""
    wanted = list(photo_ids)
    if not wanted:
        return set()
    marks = ",".join("?" * len(wanted))
    rows = store.query(f"SELECT id FROM candidates WHERE photo_id IN ({marks})", tuple(wanted))
    return {int(r["id"]) for r in rows}


def exists(store: Store, candidate_id: int) -> bool:
    return bool(store.query("SELECT 1 FROM candidates WHERE id = ?", (candidate_id,)))


def count(store: Store) -> int:
    return int(store.query("SELECT COUNT(*) AS n FROM candidates")[0]["n"])


def generators(store: Store) -> list[str]:
    """Every generator that made a candidate, by name."""
    rows = store.query("SELECT DISTINCT generator FROM candidates ORDER BY generator")
    return [r["generator"] for r in rows]


def rounds(store: Store) -> list[int]:
    return [
        int(r["round"]) for r in store.query("SELECT DISTINCT round FROM candidates ORDER BY round")
    ]


def chain(store: Store, candidate_id: int, descendants: bool = True) -> list[Candidate]:
    """The refinement chain through a candidate, oldest first: its ancestors, itself, then
    (unless `descendants` is False) the first revision of each round after it."""
    first = get(store, candidate_id)
    if first is None:
        return []
    out, seen = [first], {first.id}
    parent = first.parent_id
    while parent is not None and parent not in seen and len(out) < CHAIN_LIMIT:
        c = get(store, parent)
        if c is None:
            break
        out.insert(0, c)
        seen.add(c.id)
        parent = c.parent_id
    current = first.id
    while descendants and len(out) < CHAIN_LIMIT:
        rows = store.query(
            "SELECT * FROM candidates WHERE parent_id = ? ORDER BY id LIMIT 1", (current,)
        )
        if not rows or rows[0]["id"] in seen:
            break
        c = from_row(rows[0])
        out.append(c)
        seen.add(c.id)
        current = c.id
    return out


# -- writes -------------------------------------------------------------------------------------
def save_round(store: Store, result: RoundResult, existing: int | None = None) -> int:
    """Store one round of generation: a new row, or the row `existing` (a redone round)
    overwritten in full; returns its id. The one place a RoundResult becomes columns."""
    if not isinstance(result, RoundResult):
        raise TypeError(f"save_round takes a RoundResult, not {type(result).__name__}")
    return save(store, _round_columns(result), existing)


def _round_columns(r: RoundResult) -> dict[str, Any]:
    return {
        "job_key": r.job_key,
        "run_id": r.run_id,
        "photo_id": r.photo_id,
        "generator": r.generator,
        "round": r.round,
        "seed": r.seed,
        "parent_id": r.parent_id,
        "coder_call_id": r.coder_call_id,
        "outcome": r.outcome,
        "program_sha": r.program_sha,
        "render_id": r.render_id,
        "accepted": int(r.accepted),
        "coverage": r.coverage,
        "png_sha": r.png_sha,
        "infra_error": r.infra_error,
        "critique": r.critique.to_dict() if r.critique is not None else None,
        "critic_call_id": r.critic_call_id,
        "violations": [v.to_dict() for v in r.violations],
    }


def save(store: Store, fields: dict[str, Any], existing: int | None = None) -> int:
    """Insert a candidate (`existing` None) or overwrite columns of the row `existing`.

    The low-level write under `save_round`, for fixtures and benches that set a few columns.
    `fields` are column values; lists and dicts (violations, critique) are stored as JSON.
    A name that is not a column is refused here, before any SQL is built from it.
    """
    unknown = sorted(set(fields) - COLUMNS)
    if unknown:
        raise ValueError(f"not candidate columns: {', '.join(unknown)}")
    if existing is None:
        return store.insert("candidates", fields)
    values = {k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in fields.items()}
    values.pop("job_key", None)
    sets = ", ".join(f"{k} = ?" for k in values)
    with store.write_lock:
        store.db.execute(f"UPDATE candidates SET {sets} WHERE id = ?", [*values.values(), existing])
    return existing


# -- helpers ------------------------------------------------------------------------------------
def _filtered(
    select: str,
    accepted: bool | None,
    rendered: bool | None,
    photo_id: int | None,
    generator: str | None,
    round_: int | None,
) -> tuple[str, tuple[Any, ...]]:
    where: list[str] = []
    params: list[Any] = []
    if accepted is not None:
        where.append("accepted = ?")
        params.append(int(accepted))
    if rendered is not None:
        where.append("png_sha IS NOT NULL" if rendered else "png_sha IS NULL")
    for column, value in (("photo_id", photo_id), ("generator", generator), ("round", round_)):
        if value not in (None, ""):
            where.append(f"{column} = ?")
            params.append(value)
    sql = select + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
    return sql, tuple(params)


def _where_in(store: Store, column: str, values: list[Any]) -> list[Candidate]:
    sql = f"SELECT * FROM candidates WHERE {column} IN ({{marks}}) ORDER BY id"
    return sorted((from_row(r) for r in store.query_in(sql, values)), key=lambda c: c.id)
