"""Model-call records: the one module that reads and writes the `model_calls` table.

Every request to a model is saved before its reply is used, so paid-for work survives a crash
and a rerun finds it by job key.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable

from refpool.core.contracts import ModelCall
from refpool.core.secret_values import redact_known
from refpool.core.store.db import Store

# Key-shaped strings a vendor may echo in an error body (masked or not): never stored.
_SECRETS = (
    # a vendor prefix, then a key's body: long, or masked (hf_S****T123). A word such as the
    # model name `hf-loading` is neither, and stays.
    re.compile(
        r"\b(?:hf|sk|pk|rk|gsk|xai|nvapi)[_-]"
        r"(?:[A-Za-z0-9._-]*[*•][A-Za-z0-9*•._-]*|(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{16,})"
    ),
    re.compile(r"(?i)\bbearer\s+[^\s\"',}]+"),
    re.compile(
        r"(?i)((?:api[_-]?key|access[_-]?token|token|secret|authorization|password)"
        r"[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+"
    ),
    re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}\b"),
)


def scrub_secrets(text: str | None) -> str | None:
    """`text` with any fragment of a key this process read (by value: an unprefixed key has
    no shape) and anything that looks like a key (by shape) replaced by [redacted]."""
    if not text:
        return text
    text = redact_known(text)
    for pattern in _SECRETS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + "[redacted]", text)
    return text


def from_row(row: sqlite3.Row) -> ModelCall:
    return ModelCall(
        id=row["id"],
        model=row["model"],
        base_url=row["base_url"],
        purpose=row["purpose"],
        messages=json.loads(row["messages"]),
        params=json.loads(row["params"]),
        outcome=row["outcome"],
        response=row["response"],
        reasoning=row["reasoning"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        latency_ms=row["latency_ms"],
        cost_usd=row["cost_usd"],
        error=row["error"],
        job_key=row["job_key"],
        finish_reason=row["finish_reason"],
        refusal=row["refusal"],
        http_status=row["http_status"],
        served_model=row["served_model"],
        failure=row["failure"],
        created_at=row["created_at"],
    )


def save(store: Store, call: ModelCall) -> int:
    """Record a call in one insert (a reply saved without its job key could not be reused)."""
    row = call.to_dict()
    del row["id"], row["created_at"]  # the database assigns both
    row["error"] = scrub_secrets(row["error"])
    return store.insert("model_calls", row)


def get(store: Store, call_id: int) -> ModelCall | None:
    rows = store.query("SELECT * FROM model_calls WHERE id = ?", (call_id,))
    return from_row(rows[0]) if rows else None


def by_ids(store: Store, ids: Iterable[int]) -> dict[int, ModelCall]:
    """The calls with these ids (a candidate's coder call, say), by id."""
    rows = store.query_in("SELECT * FROM model_calls WHERE id IN ({marks})", sorted(set(ids)))
    return {row["id"]: from_row(row) for row in rows}


def latest_paid(store: Store, job_key: str, purpose: str) -> ModelCall | None:
    """The latest successful reply already paid for under this job key, if any."""
    rows = store.query(
        "SELECT * FROM model_calls WHERE job_key = ? AND purpose = ? AND outcome = 'ok'"
        " ORDER BY id DESC LIMIT 1",
        (job_key, purpose),
    )
    return from_row(rows[0]) if rows else None


def by_job_keys(store: Store, keys: Iterable[str]) -> list[ModelCall]:
    """Every call made under these job keys, oldest first."""
    sql = "SELECT * FROM model_calls WHERE job_key IN ({marks})"
    rows = store.query_in(sql, list(keys))
    return sorted((from_row(r) for r in rows), key=lambda call: call.id or 0)


def latest_answered(
    store: Store, model: str, base_url: str, purpose: str, n: int = 2
) -> list[ModelCall]:
    """The latest `n` calls to this model that got an HTTP answer, oldest first: whether the
    model refused for good is read from them (generators.llm.permanent_refusal)."""
    rows = store.query(
        "SELECT * FROM model_calls WHERE model = ? AND base_url = ? AND purpose = ?"
        " AND http_status IS NOT NULL ORDER BY id DESC LIMIT ?",
        (model, base_url, purpose, n),
    )
    return [from_row(r) for r in reversed(rows)]


def latest_status(store: Store, model: str, base_url: str, purpose: str) -> ModelCall | None:
    """The latest call to this model that got an HTTP answer (None if none did): a permanent
    4xx there means the model refused the request shape, and asking again would pay again."""
    rows = store.query(
        "SELECT * FROM model_calls WHERE model = ? AND base_url = ? AND purpose = ?"
        " AND http_status IS NOT NULL ORDER BY id DESC LIMIT 1",
        (model, base_url, purpose),
    )
    return from_row(rows[0]) if rows else None


def last_id(store: Store) -> int:
    """The newest call's id (0 when none): what a run made is what comes after it."""
    rows = store.query("SELECT MAX(id) AS id FROM model_calls")
    return int(rows[0]["id"] or 0)


def made_after(store: Store, call_id: int, purpose: str) -> list[ModelCall]:
    """The calls for `purpose` after `call_id` (what one command paid for), oldest first."""
    rows = store.query(
        "SELECT * FROM model_calls WHERE id > ? AND purpose = ? ORDER BY id", (call_id, purpose)
    )
    return [from_row(r) for r in rows]


def with_outcome_after(store: Store, call_id: int, outcome: str) -> list[ModelCall]:
    """The calls after `call_id` with this outcome (e.g. those a Ctrl-C interrupted), oldest first."""
    rows = store.query(
        "SELECT * FROM model_calls WHERE id > ? AND outcome = ? ORDER BY id", (call_id, outcome)
    )
    return [from_row(r) for r in rows]
