"""Near-duplicate photos by what a person sees (issue 33, item 3): a resized, recompressed or
cropped copy of a library photo is refused, naming it; distinct photos all import. The
threshold and its measured pairs: bench/photo_near_duplicates.py and
docs/explanation/near-duplicates.md."""

from __future__ import annotations

import io
import shutil

import pytest
from conftest import SAMPLES
from PIL import Image

from refpool.intake import near_duplicates as nd
from refpool.intake.photos import import_folder, normalise_image

DAHLIA = "dahlia_vultilion_6056698931.jpg"


def _jpeg(img: Image.Image, quality: int = 90) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def _copies() -> dict[str, bytes]:
    with Image.open(SAMPLES / DAHLIA) as img:
        img = img.convert("RGB")
    w, h = img.size
    return {
        "half.jpg": _jpeg(img.resize((w // 2, h // 2), Image.Resampling.LANCZOS)),
        "recompressed.jpg": _jpeg(img, quality=30),
        "crop_corner.jpg": _jpeg(img.crop((0, 0, int(w * 0.9), int(h * 0.9)))),
        "crop_far.jpg": _jpeg(img.crop((int(w * 0.1), int(h * 0.1), w, h))),
        "crop_width.jpg": _jpeg(img.crop((0, 0, int(w * 0.9), h))),
        "crop_85.jpg": _jpeg(img.crop((int(w * 0.075), 0, int(w * 0.925), int(h * 0.85)))),
    }


def _folder(tmp_path, files: dict[str, bytes]):
    folder = tmp_path / "copies"
    folder.mkdir()
    lines = ["file,source,author,license,subject"]
    for name, data in files.items():
        (folder / name).write_bytes(data)
        lines.append(f"{name},https://example.org/{name},me,CC0,dahlia")
    (folder / "photos.csv").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize("forget_hashes", [False, True])
def test_every_likely_copy_of_a_library_photo_is_refused(store, tmp_path, forget_hashes):
    shutil.copytree(SAMPLES, tmp_path / "samples")
    assert import_folder(store, tmp_path / "samples").ok  # three distinct photos: all in
    if forget_hashes:  # photos imported before m015 have none: computed from their files
        store.db.execute("UPDATE photos SET near_hashes = NULL")
    report = import_folder(store, _folder(tmp_path, _copies()))
    assert not report.imported
    refused = dict(report.refused)
    assert set(refused) == set(_copies())
    for why in refused.values():
        assert f"near duplicate of photo 1 ({DAHLIA})" in why


def test_copies_lie_within_the_threshold_and_distinct_photos_beyond_it():
    photos = {p.name: normalise_image(p.read_bytes())[0] for p in sorted(SAMPLES.glob("*.jpg"))}
    hashes = {name: nd.photo_hashes(img) for name, img in photos.items()}
    dahlia = hashes[DAHLIA]
    for name, data in _copies().items():
        copy = nd.photo_hashes(normalise_image(data)[0])
        assert nd.distance(copy, dahlia) <= nd.NEAR_DUPLICATE_BITS, name
        for other in set(hashes) - {DAHLIA}:
            assert nd.distance(copy, hashes[other]) > nd.NEAR_DUPLICATE_BITS + 4, (name, other)
    names = sorted(hashes)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert nd.distance(hashes[a], hashes[b]) > nd.NEAR_DUPLICATE_BITS + 4, (a, b)


def test_the_hashes_survive_the_store_round_trip():
    with Image.open(SAMPLES / DAHLIA) as img:
        hashes = nd.photo_hashes(img.convert("RGB"))
    assert nd.PhotoHashes.from_text(hashes.to_text()) == hashes
    assert len(hashes.windows) == len(nd.window_boxes(*img.size))
