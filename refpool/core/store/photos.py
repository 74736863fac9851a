"""Photo records: load and list what intake stored (every query on `photos` but intake's own)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from refpool.core.contracts import Photo
from refpool.core.errors import NotFound
from refpool.core.store.db import Store


def photo_from_row(row: sqlite3.Row) -> Photo:
    return Photo(
        id=row["id"],
        sha256=row["sha256"],
        file_name=row["file_name"],
        path=row["path"],
        licence=row["licence"],
        licence_version=row["licence_version"] or "",
        author=row["author"] or "",
        source_url=row["source_url"] or "",
        width=row["width"],
        height=row["height"],
        phash=row["phash"],
        subject=row["subject"] or "",
        notes=row["notes"] or "",
    )


def list_photos(store: Store) -> list[Photo]:
    """Every photo in the library, oldest first. `Photo.path` is relative to the data dir."""
    return [photo_from_row(r) for r in store.query("SELECT * FROM photos ORDER BY id")]


def get_photo(store: Store, photo_id: int) -> Photo:
    rows = store.query("SELECT * FROM photos WHERE id = ?", (photo_id,))
    if not rows:
        raise NotFound(f"photo {photo_id} is not in the library; see `refpool photos list`")
    return photo_from_row(rows[0])


def get_photos(store: Store, photo_ids: set[int] | list[int]) -> dict[int, Photo]:
    """photo id -> Photo for the ids that exist."""
    rows = store.query_in("SELECT * FROM photos WHERE id IN ({marks})", sorted(set(photo_ids)))
    return {int(row["id"]): photo_from_row(row) for row in sorted(rows, key=lambda r: r["id"])}


def photo_file(store: Store, photo: Photo) -> Path:
    """Absolute path of a photo's normalised image."""
    return store.home / photo.path
