"""The studio's media URLs name renders, thumbnails and photos without a server path, and the
served studio maps those names back only to files in its own folders."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from factories import add_candidate
from test_studio_exposure import SECRET, exposed, login  # noqa: F401 - exposed is a fixture

from curation.curators import add_curator
from curation.detail import load_detail
from curation.files import static_dirs, thumbnail
from curation.service import Services, Settings, screen
from refpool.core.store import Store, candidates
from refpool.core.store.photos import get_photos, photo_file
from refpool.intake.photos import import_folder


@pytest.fixture
def media(tmp_path, sample_photos):
    """A store under a home whose path names its owner, with a photo imported into the photos
    folder and a render refined once; yields (store, the refined candidate's id)."""
    store = Store(tmp_path / "home-alice" / ".refpool")
    photo = import_folder(store, sample_photos).imported[0]
    first = add_candidate(store, photo.id)
    second = add_candidate(store, photo.id, round_=1, hue=0.4, seed=1, parent_id=first)
    yield store, second
    store.close()


def leaks(url: str, home: Path) -> list[str]:
    """The parts of the home path a URL shows (the path itself included)."""
    parts = [str(home), *(p for p in home.parts if len(p) >= 3)]
    return [p for p in parts if p in url]


def test_render_thumbnail_and_photo_urls_show_no_part_of_the_home_path(media):
    store, cid = media
    detail = load_detail(store, cid, "alice")
    assert detail is not None and detail.png_url and detail.photo_url
    thumbs = [stage.thumb_url for stage in detail.history]
    shown = screen(Services(store, Settings()), "alice", candidate_id=cid - 1)
    urls = [detail.png_url, detail.photo_url, *thumbs, *shown.prefetch]
    assert len(thumbs) == 2 and shown.prefetch
    assert all(url and not leaks(url, store.home) for url in urls), urls
    sha = candidates.get(store, cid).png_sha
    assert detail.png_url == f"media/png/{sha}.png"
    assert re.fullmatch(r"media/photo/[0-9a-f]{64}\.jpg", detail.photo_url)
    assert all(t and re.fullmatch(r"media/thumb/[0-9a-f]{64}_192\.jpg", t) for t in thumbs)


def test_names_map_back_only_to_files_in_the_served_folders(media):
    from curation.files import is_media_route, media_file

    store, cid = media
    folders = static_dirs(store)
    detail = load_detail(store, cid, "alice")
    assert detail is not None
    sha = candidates.get(store, cid).png_sha
    photo = get_photos(store, [detail.photo.id])[detail.photo.id]
    for url, path in (
        (detail.png_url, store.png_path(sha)),
        (detail.photo_url, photo_file(store, photo)),
        (detail.history[-1].thumb_url, thumbnail(store, sha)),
    ):
        assert media_file(folders, "/" + url) == path
    for bad in (
        "/media/png/../../store.db",
        "/media/png/..%2F..%2Fstore.db",
        f"/media/png/{sha.upper()}.png",  # not lower-case hex
        f"/media/png/{'g' * 64}.png",
        f"/media/png/{sha[:-1]}.png",
        f"/media/png/{sha}.png/x",
        f"/media/png/{sha}.jpg",
        f"/media/thumb/{sha}_0.jpg",
        f"/media/thumb/{sha}.jpg",
        "/media/photo/../store.db",
        "/media/photo/.hidden.jpg",
        "/media/photo/a/b.jpg",
        "/media/photo//etc/passwd",
        "/media/db/store.db",  # an unknown kind
        "/media/",
        "/reports/draft-01.html",
        "/reports/../store.db",
    ):
        assert is_media_route(bad) and media_file(folders, bad) is None, bad
    assert not is_media_route("/gradio_api/info") and media_file(folders, "/config") is None
    # a name is looked for only in the served folders it belongs to
    assert media_file([store.home / "reports"], "/" + detail.png_url) is None


def test_the_served_studio_answers_media_names_and_nothing_else(media, exposed):  # noqa: F811
    store, cid = media
    add_curator(store, "alice", SECRET)
    url, _ = exposed(store)
    detail = load_detail(store, cid, "alice")
    assert detail is not None and detail.png_url and detail.photo_url
    sha = candidates.get(store, cid).png_sha
    assert httpx.get(f"{url}/{detail.png_url}", timeout=30).status_code in (401, 403)
    cookies = login(url, "alice", SECRET).cookies
    with httpx.Client(base_url=url, cookies=cookies, timeout=30) as c:
        assert detail.png_url == f"media/png/{sha}.png"
        render = c.get("/" + detail.png_url)
        assert render.status_code == 200 and render.content == store.png_path(sha).read_bytes()
        thumb = c.get("/" + detail.history[-1].thumb_url)
        assert thumb.status_code == 200 and thumb.content[:2] == b"\xff\xd8"  # a JPEG
        photo = c.get("/" + detail.photo_url)
        assert (
            photo.status_code == 200
            and photo.content == photo_file(store, detail.photo).read_bytes()
        )
        for bad in (
            "/media/png/..%2F..%2F..%2Fstore.db",
            "/media/photo/%2E%2E%2F%2E%2E%2Fstore.db",
            "/media/photo/%2Fetc%2Fpasswd",
            f"/media/png/{'g' * 64}.png",
            "/media/db/store.db",
        ):
            refused = c.get(bad)
            assert refused.status_code == 404, bad
            assert str(store.home) not in refused.text
