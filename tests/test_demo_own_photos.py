"""The demo paints only its own samples (issue 33, item 7): run after importing your own photos,
it neither plans the procedural generator over your library nor puts paintings of your photos
in your queue (nor in its report or calibration)."""

from __future__ import annotations

import functools
import io

import pytest
from PIL import Image, ImageDraw

import refpool.demo
from generators.batch import generate
from refpool.core.store import candidates
from refpool.demo import run_demo
from refpool.intake.photos import import_folder


def _own_photo(folder) -> None:
    folder.mkdir()
    img = Image.new("RGB", (400, 300), (30, 90, 160))
    ImageDraw.Draw(img).ellipse((120, 60, 300, 240), fill=(240, 200, 40))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=90)
    (folder / "sunflower.jpg").write_bytes(buf.getvalue())
    (folder / "photos.csv").write_text(
        "file,source,author,license,subject\nsunflower.jpg,https://example.org/s,me,CC0,sunflower\n"
    )


@pytest.mark.browser
def test_the_demo_leaves_the_users_own_photos_alone(store, renderer, tmp_path, monkeypatch):
    monkeypatch.setattr(refpool.demo, "generate", functools.partial(generate, renderer=renderer))
    _own_photo(tmp_path / "mine")
    (mine,) = import_folder(store, tmp_path / "mine").imported
    lines: list[str] = []
    result = run_demo(store, candidates_per_photo=1, rounds=1, progress=False, log=lines.append)
    assert "3 candidates (3 new this run), 3 accepted, 3 photo(s)" in result.generation
    assert not candidates.list_ids(store, photo_id=mine.id)  # nothing of the user's painted
    assert result.report_path is not None
    again = run_demo(store, candidates_per_photo=1, rounds=1, progress=False, log=lines.append)
    assert "(0 new this run)" in again.generation and "3 photo(s)" in again.generation
    assert not candidates.list_ids(store, photo_id=mine.id)
