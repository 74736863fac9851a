"""Files the studio serves: renders, source photos and cached thumbnails, as Gradio URLs.

Only the folders in `static_dirs` are served; the database never is.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from urllib.parse import quote

from PIL import Image

from refpool.store import Store

THUMB_SIZE = 192


def file_url(path: Path) -> str:
    """A URL Gradio serves (relative, so it works behind a root path)."""
    return "gradio_api/file=" + quote(str(path))


def static_dirs(store: Store) -> list[Path]:
    """Folders the studio may serve: renders, photos, thumbnails, the Pool tab's reports."""
    dirs = [store.home / d for d in ("blobs/png", "photos", "thumbs", "reports")]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    return dirs


def thumbnail(store: Store, png_sha: str, size: int = THUMB_SIZE) -> Path | None:
    """A cached JPEG thumbnail of a render, made on first use; None if the PNG is missing."""
    out = store.home / "thumbs" / png_sha[:2] / f"{png_sha}_{size}.jpg"
    if out.exists():
        return out
    src = store.png_path(png_sha)
    if not src.exists():
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(src) as opened:
        img = opened.convert("RGB")
    img.thumbnail((size, size))
    tmp = out.with_suffix(f".tmp{uuid.uuid4().hex[:6]}")  # two tabs may make it at once
    img.save(tmp, "JPEG", quality=85)
    tmp.replace(out)
    return out


def thumbnail_url(store: Store, png_sha: str | None) -> str | None:
    """The thumbnail's URL, or None for a candidate without a render (or a lost PNG)."""
    thumb = thumbnail(store, png_sha) if png_sha else None
    return file_url(thumb) if thumb else None
