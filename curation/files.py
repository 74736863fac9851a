"""Files the studio serves: renders, source photos, cached thumbnails and draft reports.

The page links each by a name that carries no server path (`media/png/<sha>.png`, ...);
studio/exposure.py maps a requested name back to its file with `media_file`, only inside
the folders in `static_dirs`. The database is never served.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from refpool.core.store import Store

THUMB_SIZE = 192
_warmer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="refpool-thumbs")


@dataclass(frozen=True)
class Media:
    """One kind of served file: its URLs are `route` + a name matching `name`, kept in
    `folder` (under the data directory), in a sub-folder of the name's first two characters
    when `sharded` (as the store keeps blobs)."""

    route: str  # relative, so it works behind a root path
    folder: str
    name: re.Pattern[str]
    sharded: bool = False

    def url(self, name: str) -> str:
        return self.route + name

    def file(self, folder: Path, name: str) -> Path | None:
        """The file `name` stands for in `folder`; None for a name no file of this kind has
        (a strict pattern: no slash, no `..`, nothing to resolve)."""
        if not self.name.fullmatch(name):
            return None
        return folder / name[:2] / name if self.sharded else folder / name

    def name_of(self, folder: Path, path: Path) -> str | None:
        """The name that leads back to `path`, if it is one of this kind's files in `folder`."""
        back = self.file(_plain(folder), path.name)
        return path.name if back is not None and back == _plain(path) else None


_SHA = "[0-9a-f]{64}"
MEDIA = {
    "png": Media("media/png/", "blobs/png", re.compile(_SHA + r"\.png"), sharded=True),
    # a photo by its file name in the photos folder (the store names them by sha256)
    "photo": Media(
        "media/photo/", "photos", re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]*\.[0-9A-Za-z]{1,5}")
    ),
    "thumb": Media(
        "media/thumb/", "thumbs", re.compile(_SHA + r"_[1-9][0-9]{0,3}\.jpg"), sharded=True
    ),
    # draft reports keep the route they always had
    "report": Media("reports/", "reports", re.compile(r"draft-[1-9][0-9]*\.html")),
}


def _plain(path: Path) -> Path:
    """`path` made absolute with `..` folded, without following links (both sides of a
    comparison are spelled from the same data directory)."""
    return Path(os.path.abspath(path))


def media_url(home: Path, path: Path) -> str | None:
    """The URL the page links a served file by, or None if `path` is none of them."""
    for kind in MEDIA.values():
        name = kind.name_of(home / kind.folder, path)
        if name is not None:
            return kind.url(name)
    return None


def render_url(png_sha: str) -> str:
    """Where the page links a render."""
    return MEDIA["png"].url(f"{png_sha}.png")


_ROUTES = tuple(sorted({"/" + kind.route.partition("/")[0] + "/" for kind in MEDIA.values()}))


def is_media_route(path: str) -> bool:
    """Whether a request path is under a named route (`/media/`, `/reports/`): answered only
    for a name `media_file` knows, so an unknown kind is refused too."""
    return path.startswith(_ROUTES)


def media_file(folders: Sequence[Path], path: str) -> Path | None:
    """The file a request path (`/media/png/<sha>.png`, `/reports/draft-<id>.html`, ...)
    names inside the served `folders`; None for any other path, so no request can lead
    anywhere but one of the studio's files."""
    for kind in MEDIA.values():
        if path.startswith("/" + kind.route):
            folder = _served_folder(folders, kind)
            rest = path[len(kind.route) + 1 :]
            return kind.file(folder, rest) if folder is not None else None
    return None


def _served_folder(folders: Sequence[Path], kind: Media) -> Path | None:
    """Which of the served folders holds `kind` (its path ends with the kind's folder)."""
    tail = Path(kind.folder).parts
    return next((f for f in folders if f.parts[-len(tail) :] == tail), None)


def report_name(draft_id: int) -> str:
    """The file name of a draft's report, in the reports folder and in its URL."""
    return f"draft-{draft_id}.html"


def report_url(draft_id: int) -> str:
    """Where the page links a draft's report."""
    return MEDIA["report"].url(report_name(draft_id))


def static_dirs(store: Store) -> list[Path]:
    """Folders the studio may serve: renders, photos, thumbnails, the Pool tab's reports."""
    dirs = [store.home / kind.folder for kind in MEDIA.values()]
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
    return media_url(store.home, thumb) if thumb else None
