"""Files the studio serves: renders, source photos and cached thumbnails, as Gradio URLs.

Only the folders in `static_dirs` are served; the database never is.
"""

from __future__ import annotations

import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from urllib.parse import quote

from PIL import Image

from refpool.core.store import Store

THUMB_SIZE = 192
_warmer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="refpool-thumbs")


def file_url(path: Path) -> str:
    """A URL Gradio serves (relative, so it works behind a root path)."""
    return "gradio_api/file=" + quote(str(path))


REPORTS_ROUTE = "/reports/"  # draft reports by name: the page never shows their server path
_REPORT_NAME = re.compile(r"draft-([1-9][0-9]*)\.html")


def report_name(draft_id: int) -> str:
    """The file name of a draft's report, in the reports folder and in its URL."""
    return f"draft-{draft_id}.html"


def report_url(draft_id: int) -> str:
    """Where the page links a draft's report: relative, like the studio's file URLs."""
    return REPORTS_ROUTE.lstrip("/") + report_name(draft_id)


def report_file(reports: Path, path: str) -> Path | None:
    """The file `/reports/draft-<id>.html` names in `reports`; None for any other name, so no
    request path can lead anywhere but a draft report."""
    if not path.startswith(REPORTS_ROUTE):
        return None
    found = _REPORT_NAME.fullmatch(path[len(REPORTS_ROUTE) :])
    return reports / report_name(int(found.group(1))) if found else None


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
        opened.thumbnail((size, size), reducing_gap=2.0)  # shrink first: far less to convert
        img = opened.convert("RGB")
    tmp = out.with_suffix(f".tmp{uuid.uuid4().hex[:6]}")  # two tabs may make it at once
    img.save(tmp, "JPEG", quality=85)
    tmp.replace(out)
    return out


def warm_thumbnails(store: Store, png_shas: list[str]) -> None:
    """Make the thumbnails the next screens will show in the background, so that making one
    is never on the path from a keypress to the next image."""
    for sha in png_shas:
        _warmer.submit(_warm_one, store, sha)


def _warm_one(store: Store, png_sha: str) -> None:
    with suppress(OSError, ValueError):  # a broken PNG: the screen that shows it says so
        thumbnail(store, png_sha)


def thumbnail_url(store: Store, png_sha: str | None) -> str | None:
    """The thumbnail's URL, or None for a candidate without a render (or a lost PNG)."""
    thumb = thumbnail(store, png_sha) if png_sha else None
    return file_url(thumb) if thumb else None
