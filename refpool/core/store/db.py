"""The store: one data directory holding a SQLite database and content-addressed files.

    $REFPOOL_HOME/            (default ./refpool-data)
        refpool.db            SQLite, WAL, numbered migrations (refpool/core/store/migrations.py)
        blobs/png/ab/<sha>.png
        blobs/js/ab/<sha>.js
        blobs/<suffix>/ab/<sha>.<suffix>   a release's other files (metadata.jsonl, ...)
        photos/<sha>.<ext>

Every write commits before returning, so a crash loses nothing that was reported done.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from refpool.core.contracts import Render
from refpool.core.errors import RefpoolError
from refpool.core.store import migrations

HOME_ENV = "REFPOOL_HOME"
IN_CHUNK = 500  # values per IN list: SQLite binds at most 999 parameters by default


class StoreUnavailable(RefpoolError):
    """The data directory or its database cannot be opened."""


def data_home() -> Path:
    return Path(os.environ.get(HOME_ENV) or "refpool-data").resolve()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Store:
    """Open with `Store(path)` or `Store.open()` (uses $REFPOOL_HOME)."""

    def __init__(self, home: Path | str) -> None:
        self.home = Path(home).resolve()
        self.db_path = self.home / "refpool.db"
        self._local = threading.local()
        self.write_lock = threading.RLock()
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            migrations.apply(self.db)
        except (OSError, sqlite3.DatabaseError) as exc:
            # A data folder that is a file, unwritable, or a database that is not one: the
            # user's to fix, so say where and how instead of a traceback.
            raise StoreUnavailable(
                f"cannot open the data directory {self.home} ({exc}). Point {HOME_ENV} at a"
                " folder you can write to; if refpool.db there is damaged, move it aside and"
                " restore it from a backup."
            ) from exc

    @classmethod
    def open(cls) -> Store:
        return cls(data_home())

    # -- SQLite ---------------------------------------------------------------------------
    @property
    def db(self) -> sqlite3.Connection:
        """A connection for the calling thread (SQLite connections are not thread-safe)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.db_path, isolation_level=None, timeout=30)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # a confirmed rating survives power loss
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        return self.db.execute(sql, params).fetchall()

    def query_in(
        self, sql: str, values: Sequence[Any], params: tuple[Any, ...] = ()
    ) -> list[sqlite3.Row]:
        """Run `sql`, whose `{marks}` stands for an IN list of `values`, in chunks that stay
        under SQLite's limit on bound parameters (999 by default). `params` come first."""
        rows: list[sqlite3.Row] = []
        for i in range(0, len(values), IN_CHUNK):
            chunk = tuple(values[i : i + IN_CHUNK])
            marks = ",".join("?" for _ in chunk)
            rows += self.db.execute(sql.format(marks=marks), (*params, *chunk)).fetchall()
        return rows

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """`with store.transaction() as db:` one IMMEDIATE transaction, committed on success.

        IMMEDIATE takes the write lock up front, so two writers (two studio tabs, a batch
        and the studio) never read-then-write the same rows out of order.
        """
        with self.write_lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def insert(self, table: str, row: dict[str, Any]) -> int:
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        values = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in row.values()]
        with self.write_lock:
            cur = self.db.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", values)
        assert cur.lastrowid is not None  # an INSERT always sets it
        return cur.lastrowid

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- content-addressed files ---------------------------------------------------------
    def _blob_path(self, kind: str, sha: str) -> Path:
        return self.home / "blobs" / kind / sha[:2] / f"{sha}.{kind}"

    def _write_blob(self, kind: str, data: bytes) -> str:
        sha = sha256_bytes(data)
        path = self._blob_path(kind, sha)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
            tmp.write_bytes(data)
            os.replace(tmp, path)  # atomic: a reader never sees half a file
        return sha

    def put_blob(self, kind: str, data: bytes) -> str:
        """Keep `data` under blobs/<kind>/ by its sha256 (kind: a file suffix, e.g. "jsonl")."""
        return self._write_blob(kind, data)

    def blob_path(self, kind: str, sha: str) -> Path:
        return self._blob_path(kind, sha)

    def put_png(self, png: bytes) -> str:
        return self._write_blob("png", png)

    def png_path(self, sha: str) -> Path:
        return self._blob_path("png", sha)

    def put_program(self, source: str) -> str:
        sha = self._write_blob("js", source.encode("utf-8"))
        rel = str(self._blob_path("js", sha).relative_to(self.home))
        with self.write_lock:
            self.db.execute(
                "INSERT OR IGNORE INTO programs (sha256, path) VALUES (?, ?)", (sha, rel)
            )
        return sha

    def program_source(self, sha: str) -> str:
        return self._blob_path("js", sha).read_text("utf-8")

    # -- renders and model calls ----------------------------------------------------------
    def record_render(self, render: Render) -> int:
        """Store a render (PNG as a file, row in `renders`); returns the row id."""
        png_sha = self.put_png(render.png) if render.png else None
        return self.insert(
            "renders",
            {
                "cache_key": render.cache_key,
                "program_sha": render.program_sha,
                "seed": render.seed,
                "width": render.width,
                "height": render.height,
                "profile": render.gate.profile,
                "lib_versions": render.lib_versions,
                "accepted": int(render.accepted),
                "coverage": render.gate.coverage,
                "violations": [v.to_dict() for v in render.gate.violations],
                "console": render.console,
                "png_sha": png_sha,
                "render_ms": render.render_ms,
                "infra_error": render.infra_error,
            },
        )
