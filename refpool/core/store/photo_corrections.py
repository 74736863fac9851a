"""Photo corrections: schema (m015) and records. A photo's facts can be corrected or the photo
withdrawn; every change is kept, with who asked and why.

A correction changes the `photos` row, so it reaches the next draft and the next release; a
version already released keeps the facts frozen in its own rows and files (releases.py), which
nothing here touches. A withdrawn photo stays in the library (its paintings, ratings and the
releases that hold them keep their references) but no draft takes its paintings again.

Also here, beside the photo: its near-duplicate hashes (refpool/intake/near_duplicates.py),
computed at import, or when first needed for a photo imported before m015.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from refpool.core.errors import InputError, NotFound

if TYPE_CHECKING:  # the store imports this module's migration; avoid the cycle at runtime
    from refpool.core.store.db import Store

# The facts `refpool photos update` may correct: the CLI's option -> the photos column.
CORRECTABLE = {
    "licence": "licence",
    "licence_version": "licence_version",
    "author": "author",
    "source_url": "source_url",
    "subject": "subject",
    "notes": "notes",
}
WITHDRAWN = "withdrawn"  # the field a withdrawal is recorded under

_SCHEMA = """
ALTER TABLE photos ADD COLUMN near_hashes TEXT;
ALTER TABLE photos ADD COLUMN withdrawn_reason TEXT;
ALTER TABLE photos ADD COLUMN withdrawn_at TEXT;
CREATE TABLE photo_corrections (
    id INTEGER PRIMARY KEY,
    photo_id INTEGER NOT NULL REFERENCES photos(id),
    field TEXT NOT NULL,             -- a photos column, or 'withdrawn'
    before TEXT,
    after TEXT,
    reason TEXT NOT NULL DEFAULT '',
    made_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
)
"""


def m015_photo_corrections(db: sqlite3.Connection) -> None:
    """Photos: corrections and withdrawals (with their reasons), and each photo's
    near-duplicate hashes (NULL until computed)."""
    for statement in _SCHEMA.split(";\n"):
        if statement.strip():
            db.execute(statement)


@dataclass(frozen=True)
class Correction:
    photo_id: int
    field: str
    before: str | None
    after: str | None
    reason: str
    made_at: str = ""


def correct(
    store: Store, photo_id: int, changes: dict[str, str], reason: str = ""
) -> list[Correction]:
    """Apply the changed facts (keys of CORRECTABLE) in one transaction; returns what differed
    (an unchanged value is not recorded). The next draft and release read the new facts."""
    unknown = sorted(set(changes) - set(CORRECTABLE))
    if unknown:
        raise InputError(
            f"cannot correct {', '.join(unknown)}; correctable: {', '.join(CORRECTABLE)}"
        )
    made: list[Correction] = []
    with store.transaction() as db:
        row = _row(db, photo_id)
        for name, value in changes.items():
            column = CORRECTABLE[name]
            before = row[column]
            if (before or "") == value:
                continue
            db.execute(f"UPDATE photos SET {column} = ? WHERE id = ?", (value, photo_id))
            db.execute(
                "INSERT INTO photo_corrections (photo_id, field, before, after, reason)"
                " VALUES (?, ?, ?, ?, ?)",
                (photo_id, column, before, value, reason),
            )
            made.append(Correction(photo_id, column, before, value, reason))
    return made


def withdraw(store: Store, photo_id: int, reason: str) -> Correction:
    """Withdraw a photo: no draft takes its paintings again; releases already made keep them."""
    reason = reason.strip()
    if not reason:
        raise InputError("a withdrawal needs its reason: drafts show it to curators")
    with store.transaction() as db:
        before = _row(db, photo_id)["withdrawn_reason"]
        db.execute(
            "UPDATE photos SET withdrawn_reason = ?,"
            " withdrawn_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?",
            (reason, photo_id),
        )
        db.execute(
            "INSERT INTO photo_corrections (photo_id, field, before, after, reason)"
            " VALUES (?, ?, ?, ?, ?)",
            (photo_id, WITHDRAWN, before, reason, reason),
        )
    return Correction(photo_id, WITHDRAWN, before, reason, reason)


def withdrawn(store: Store) -> dict[int, str]:
    """photo id -> why it was withdrawn, for every withdrawn photo."""
    rows = store.query("SELECT id, withdrawn_reason FROM photos WHERE withdrawn_reason IS NOT NULL")
    return {int(r["id"]): r["withdrawn_reason"] for r in rows}


def history(store: Store, photo_id: int) -> list[Correction]:
    """Every correction and withdrawal of a photo, oldest first."""
    rows = store.query(
        "SELECT * FROM photo_corrections WHERE photo_id = ? ORDER BY id", (photo_id,)
    )
    return [
        Correction(r["photo_id"], r["field"], r["before"], r["after"], r["reason"], r["made_at"])
        for r in rows
    ]


def near_hashes(store: Store) -> list[tuple[int, str, str | None]]:
    """(photo id, file name, near-duplicate hashes or None when not computed yet) per photo."""
    rows = store.query("SELECT id, file_name, near_hashes FROM photos ORDER BY id")
    return [(int(r["id"]), r["file_name"], r["near_hashes"]) for r in rows]


def save_near_hashes(store: Store, photo_id: int, text: str) -> None:
    with store.write_lock:
        store.db.execute("UPDATE photos SET near_hashes = ? WHERE id = ?", (text, photo_id))


def _row(db: sqlite3.Connection, photo_id: int) -> sqlite3.Row:
    row = db.execute("SELECT * FROM photos WHERE id = ?", (photo_id,)).fetchone()
    if row is None:
        raise NotFound(f"photo {photo_id} is not in the library; see `refpool photos list`")
    return row
