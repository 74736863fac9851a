"""What is said about a released version after its files were frozen: schema (m016) and records.

One row per version in `release_marks`:
  content_sha256   the hash of what the version publishes, its version name left out (rows,
                   files, card facts: pool/dataset/identity.py); a release that would publish
                   the same is refused, naming this version
  withdrawn_at     when a curator withdrew it (NULL: not withdrawn), and withdrawn_reason why;
                   its frozen files are kept for whoever pinned it
  hub_marked       JSON list of the repos whose main branch says it is withdrawn
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the store imports this module's migration; avoid the cycle at runtime
    from refpool.core.store.db import Store

_SCHEMA = """
CREATE TABLE release_marks (
    version TEXT PRIMARY KEY REFERENCES pool_versions(version),
    content_sha256 TEXT,             -- NULL: released before m016 (pool/dataset/identity.py)
    withdrawn_at TEXT,               -- NULL: not withdrawn
    withdrawn_reason TEXT,
    hub_marked TEXT NOT NULL DEFAULT '[]'
)
"""


def m016_release_marks(db: sqlite3.Connection) -> None:
    """Pool: each version's content hash (an identical release is refused) and its withdrawal."""
    db.execute(_SCHEMA)


@dataclass(frozen=True)
class Withdrawal:
    version: str
    withdrawn_at: str
    reason: str
    hub_marked: tuple[str, ...] = ()

    @property
    def note(self) -> str:
        """How `pool versions`, a card and the Hub say it."""
        return f"WITHDRAWN {self.withdrawn_at}: {self.reason}"


def _ensure(store: Store, version: str) -> None:
    store.db.execute("INSERT OR IGNORE INTO release_marks (version) VALUES (?)", (version,))


def set_content_hash(store: Store, version: str, sha: str) -> None:
    """Record what `version` publishes (inside the transaction that releases it)."""
    with store.write_lock:
        _ensure(store, version)
        store.db.execute(
            "UPDATE release_marks SET content_sha256 = ? WHERE version = ?", (sha, version)
        )


def content_hashes(store: Store) -> dict[str, str]:
    """version -> content hash, for the versions released since m016."""
    rows = store.query("SELECT version, content_sha256 FROM release_marks")
    return {r["version"]: r["content_sha256"] for r in rows if r["content_sha256"]}


def withdraw(store: Store, version: str, reason: str) -> Withdrawal:
    """Mark `version` withdrawn (once: a second call returns the first withdrawal)."""
    with store.transaction() as db:
        _ensure(store, version)
        db.execute(
            "UPDATE release_marks SET withdrawn_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now'),"
            " withdrawn_reason = ? WHERE version = ? AND withdrawn_at IS NULL",
            (reason, version),
        )
    found = withdrawal_of(store, version)
    assert found is not None  # just written
    return found


def mark_hub(store: Store, version: str, repo_id: str) -> None:
    """Remember that `repo_id`'s main branch now says `version` is withdrawn."""
    found = withdrawal_of(store, version)
    if found is None or repo_id in found.hub_marked:
        return
    marked = json.dumps(sorted({*found.hub_marked, repo_id}))
    with store.write_lock:
        store.db.execute(
            "UPDATE release_marks SET hub_marked = ? WHERE version = ?", (marked, version)
        )


def withdrawal_of(store: Store, version: str) -> Withdrawal | None:
    return withdrawals(store).get(version)


def withdrawals(store: Store) -> dict[str, Withdrawal]:
    """version -> its withdrawal, for every withdrawn version."""
    rows = store.query("SELECT * FROM release_marks WHERE withdrawn_at IS NOT NULL")
    return {
        r["version"]: Withdrawal(
            r["version"],
            r["withdrawn_at"],
            r["withdrawn_reason"] or "",
            tuple(json.loads(r["hub_marked"] or "[]")),
        )
        for r in rows
    }
