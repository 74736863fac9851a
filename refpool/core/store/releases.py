"""Frozen releases: schema (m010) and records. A version means the same bytes forever.

Three tables, written once per version, in the transaction that releases it:
  release_freezes  who froze the version and when; the repo its card's load snippets name
  release_rows     its metadata.jsonl rows as ReleaseRow records, in file order
  release_files    every file of its release folder: (path, sha256, size); the bytes are
                   content-addressed blobs under blobs/<suffix>/ (a PNG is the PNG blob itself)

Versions released before m010 are listed in release_freezes with frozen_by "m010" and no
frozen_at: the store cannot build a release (that is pool code), so the first export of such a
version freezes it as that export writes it and records "m010 (as exported on <date>)".
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from refpool.core.contracts import ReleaseRow
from refpool.core.errors import RefpoolError

if TYPE_CHECKING:  # the store imports this module's migration; avoid the cycle at runtime
    from refpool.core.store.db import Store

AT_RELEASE = "release"  # frozen_by of a version frozen when it was released
PENDING = "m010"  # frozen_by of a version released before m010, until its first export

_SCHEMA = """
CREATE TABLE release_freezes (
    version TEXT PRIMARY KEY REFERENCES pool_versions(version),
    frozen_by TEXT NOT NULL,         -- release | m010 (as exported on <date>) | m010: not yet
    repo_id TEXT,                    -- the repo the card names; NULL: the OWNER/NAME placeholder
    frozen_at TEXT                   -- NULL: released before m010, frozen at its next export
);
CREATE TABLE release_rows (
    version TEXT NOT NULL REFERENCES pool_versions(version),
    position INTEGER NOT NULL,       -- its line in metadata.jsonl, from 0
    candidate_id INTEGER NOT NULL,
    row TEXT NOT NULL,               -- JSON ReleaseRow
    PRIMARY KEY (version, position)
);
CREATE TABLE release_files (
    version TEXT NOT NULL REFERENCES pool_versions(version),
    path TEXT NOT NULL,              -- relative to the release folder, e.g. images/love_000001.png
    sha256 TEXT NOT NULL,            -- its bytes: blobs/<suffix>/<sha[:2]>/<sha>.<suffix>
    size INTEGER NOT NULL,
    PRIMARY KEY (version, path)
);
INSERT INTO release_freezes (version, frozen_by) SELECT version, 'm010' FROM pool_versions
"""


def m010_frozen_releases(db: sqlite3.Connection) -> None:
    """Pool: every release's rows and files, frozen; earlier releases marked to be frozen."""
    for statement in _SCHEMA.split(";\n"):
        if statement.strip():
            db.execute(statement)


class FreezeError(RefpoolError, ValueError):
    pass


@dataclass(frozen=True)
class Freeze:
    version: str
    frozen_by: str
    repo_id: str | None = None
    frozen_at: str | None = None

    @property
    def frozen(self) -> bool:
        return self.frozen_at is not None

    @property
    def note(self) -> str:
        """What `pool versions` and an export say about how the version was frozen."""
        if not self.frozen:
            return f"released before {PENDING}: frozen as its next export writes it"
        if self.frozen_by == AT_RELEASE:
            return f"frozen at release ({self.frozen_at})"
        return f"frozen by {self.frozen_by}"


@dataclass(frozen=True)
class FrozenFile:
    path: str
    sha256: str
    size: int

    @property
    def kind(self) -> str:
        return blob_kind(self.path)


def blob_kind(path: str) -> str:
    """The blobs/ folder a release file's bytes live in: its suffix (png, js, jsonl, md...)."""
    return PurePosixPath(path).suffix.lstrip(".") or "bin"


def freeze_of(store: Store, version: str) -> Freeze | None:
    rows = store.query("SELECT * FROM release_freezes WHERE version = ?", (version,))
    return _freeze(rows[0]) if rows else None


def freezes(store: Store) -> dict[str, Freeze]:
    return {r["version"]: _freeze(r) for r in store.query("SELECT * FROM release_freezes")}


def _freeze(r: sqlite3.Row) -> Freeze:
    return Freeze(r["version"], r["frozen_by"], r["repo_id"], r["frozen_at"])


def save(
    store: Store,
    version: str,
    frozen_by: str,
    rows: list[ReleaseRow],
    files: list[FrozenFile],
    repo_id: str | None = None,
) -> None:
    """Record a version's frozen rows and files (their blobs already stored). Run it inside
    `store.transaction()`, with the version's pool_versions row: a version is frozen once."""
    known = freeze_of(store, version)
    if known is not None and known.frozen:
        raise FreezeError(f"version {version} is already frozen ({known.note}); it never changes")
    db = store.db
    db.execute(
        "INSERT OR REPLACE INTO release_freezes (version, frozen_by, repo_id, frozen_at)"
        " VALUES (?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
        (version, frozen_by, repo_id),
    )
    db.executemany(
        "INSERT INTO release_rows (version, position, candidate_id, row) VALUES (?, ?, ?, ?)",
        [(version, i, r.candidate_id, json.dumps(r.to_dict())) for i, r in enumerate(rows)],
    )
    db.executemany(
        "INSERT INTO release_files (version, path, sha256, size) VALUES (?, ?, ?, ?)",
        [(version, f.path, f.sha256, f.size) for f in files],
    )


def rows(store: Store, version: str) -> list[ReleaseRow]:
    """A frozen version's metadata.jsonl rows, in file order ([] if it is not frozen)."""
    found = store.query(
        "SELECT row FROM release_rows WHERE version = ? ORDER BY position", (version,)
    )
    return [ReleaseRow.from_dict(json.loads(r["row"])) for r in found]


def files(store: Store, version: str) -> list[FrozenFile]:
    """A frozen version's files, sorted by path ([] if it is not frozen)."""
    found = store.query(
        "SELECT path, sha256, size FROM release_files WHERE version = ? ORDER BY path", (version,)
    )
    return [FrozenFile(r["path"], r["sha256"], r["size"]) for r in found]
