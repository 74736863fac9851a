"""The photo brief describes the flower, not its background.

Coders that cannot see images paint from the brief, and the heuristic critic's advice comes
from the same analysis. Each sample photo is analysed twice: the file as shipped and the copy
the library stores after `photos import` (re-encoded, so the analysis meets slightly different
pixels, as every real run does).

The checks measure pixels with plain colour rules that do not share the analysis's code: the
dahlia's foliage is teal/green, the daisy's petals are bright and low in chroma with a yellow
heart on a dark ground, the rose's ground is dark leaves.

`test_contact_sheet` writes photo | flower | mask | swatches for each sample, with the brief,
to tests/artifacts/photo_brief/ (or $REFPOOL_TEST_ARTIFACTS) and prints the folder.
"""

from __future__ import annotations

import io
import os
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES
from PIL import Image, ImageDraw, ImageFont

from generators.analysis import PhotoAnalysis, analyse_path, load_rgb, srgb_to_oklab
from generators.critics import heuristic_critique
from refpool.core.store import Store
from refpool.core.store.photos import photo_file
from refpool.intake.photos import import_folder

KINDS = ("dahlia", "daisy", "rose")


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> dict[str, list[Path]]:
    """kind -> [the sample file, the library's stored copy of it]."""
    home = tmp_path_factory.mktemp("brief-home")
    store = Store(home)
    try:
        report = import_folder(store, SAMPLES)
        assert report.ok, report.summary()
        stored = {p.file_name.split("_")[0]: photo_file(store, p) for p in report.imported}
    finally:
        store.close()
    return {k: [next(SAMPLES.glob(f"{k}_*.jpg")), stored[k]] for k in KINDS}


def _pixels(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lightness, chroma and hue (degrees) of the analysis-sized image."""
    lab = srgb_to_oklab(load_rgb(path))
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    hue = np.degrees(np.arctan2(lab[..., 2], lab[..., 1])) % 360
    return lab[..., 0], chroma, hue


def _foliage_hue(lab: list[float]) -> bool:
    hue = np.degrees(np.arctan2(lab[2], lab[1])) % 360
    return bool(120 < hue < 280 and np.hypot(lab[1], lab[2]) > 0.02)


def _line(brief: str, start: str) -> str:
    return next(line for line in brief.splitlines() if line.startswith(start))


@pytest.mark.parametrize("copy", [0, 1], ids=["sample", "imported"])
def test_dahlia_palette_is_the_flower_not_the_foliage(photos, copy):
    path = photos["dahlia"][copy]
    a = analyse_path(str(path))
    lightness, chroma, hue = _pixels(path)
    foliage = ((chroma > 0.02) & (hue > 120) & (hue < 280)) | (lightness < 0.3)
    assert foliage[a.mask].mean() < 0.02, "the flower mask holds teal foliage"
    leafy = [s for s in a.palette if _foliage_hue(s.lab)]
    assert not leafy, f"foliage in the flower's palette: {leafy}"
    assert {"orange"} <= set(a.hues) and not {"teal", "green"} & set(a.hues)
    assert "teal" in a.background_hues
    # the bud at the bottom edge is another flower: the extent is the main bloom's
    assert a.extent[3] < 0.9 and not a.cropped
    brief = a.brief()
    flower_line = _line(brief, "The flower's colours")
    assert "teal" not in flower_line and "green" not in flower_line, brief
    assert "teal" in _line(brief, "Background"), brief
    assert "teal" not in _line(brief, "Photo:").split("against")[0], brief


@pytest.mark.parametrize("copy", [0, 1], ids=["sample", "imported"])
def test_daisy_area_is_petals_and_heart_only(photos, copy):
    path = photos["daisy"][copy]
    a = analyse_path(str(path))
    lightness, chroma, hue = _pixels(path)
    petal = (lightness > 0.62) & (chroma < 0.05)
    heart = (hue > 40) & (hue < 110) & (chroma > 0.08)
    flowerish = petal | heart
    assert 1 - flowerish[a.mask].mean() < 0.03, "the flower's area counts background"
    assert abs(a.coverage - float(a.mask.mean())) < 1e-9
    # the flower area is about the share of petal-and-heart pixels in the frame
    assert a.coverage <= flowerish.mean() + 0.02
    assert a.coverage > flowerish.mean() - 0.08
    assert a.separated_petals and 10 <= a.petals <= 18 and a.cropped
    assert "white" in a.hues and {"black", "green"} & set(a.background_hues)
    brief = a.brief()
    assert f"covers {a.coverage:.0%}" in _line(brief, "Size and place")
    assert "standing apart" in _line(brief, "Petals")
    assert "green" in _line(brief, "Background") and "green" not in _line(brief, "The flower's")


@pytest.mark.parametrize("copy", [0, 1], ids=["sample", "imported"])
def test_rose_mask_leaves_out_the_dark_leaves(photos, copy):
    path = photos["rose"][copy]
    a = analyse_path(str(path))
    lightness, chroma, hue = _pixels(path)
    dark = lightness < 0.5
    assert dark[a.mask].mean() < 0.08, "dark leaves counted as flower"
    assert not [s for s in a.palette if s.name == "black" and s.weight > 0.02]
    assert "pink" in a.hues
    assert "many tightly overlapping petals" in _line(a.brief(), "Petals")


def test_heuristic_critic_never_asks_for_background_colours(photos):
    """A wrong-coloured render: the advice names flower colours, never the foliage's."""
    for path in photos["dahlia"]:
        a = analyse_path(str(path))
        paper = Image.new("RGB", (600, 600), (246, 239, 226))
        draw = ImageDraw.Draw(paper)
        draw.ellipse((170, 170, 430, 430), fill=(40, 70, 150))  # a blue flower
        draw.ellipse((260, 260, 340, 340), fill=(30, 90, 80))  # a teal heart
        critique, measures = heuristic_critique(a, _png(paper))
        background = {s.hex for s in a.background}
        named = set(re.findall(r"#[0-9a-f]{6}", critique.advice))
        targets = {photo for _, photo in measures["palette_shift"]}
        assert targets, critique.advice
        for hex_ in targets | (named - {r for r, _ in measures["palette_shift"]}):
            swatch = next(s for s in a.palette if s.hex == hex_)
            assert not _foliage_hue(swatch.lab), critique.advice
        assert not background & named, critique.advice
        assert "teal" not in critique.advice.split("towards")[-1], critique.advice


def test_an_undistinguished_photo_says_so():
    """A flat grey frame has no flower to find: the brief must not pretend it has."""
    from generators.analysis import analyse

    a = analyse(np.full((90, 120, 3), 128, np.uint8))
    assert a.segmentation_fallback
    assert "could not be told apart" in a.brief()


# -- the contact sheet ------------------------------------------------------------------------
def _panel_swatches(a: PhotoAnalysis, height: int) -> Image.Image:
    panel = Image.new("RGB", (330, max(height, 420)), "white")
    draw = ImageDraw.Draw(panel)
    font = ImageFont.load_default()
    y = 6
    for title, swatches in (("flower", a.palette), ("background", a.background)):
        draw.text((6, y), title, fill="black", font=font)
        y += 16
        for s in swatches:
            draw.rectangle((6, y, 66, y + 28), fill=s.hex, outline="black")
            draw.text((74, y + 8), f"{s.name} {s.hex} {s.weight:.0%}", fill="black", font=font)
            y += 34
        y += 8
    draw.text((6, y), f"heart {a.centre_colour}", fill="black", font=font)
    draw.rectangle((120, y - 2, 160, y + 14), fill=a.centre_colour, outline="black")
    return panel


def _row(path: Path, a: PhotoAnalysis, title: str, scale: int = 3) -> Image.Image:
    """photo | flower (background tinted blue) | mask | swatches, the brief underneath."""
    rgb = load_rgb(path)
    h, w, _ = rgb.shape
    flower = rgb.copy()
    flower[~a.mask] = (flower[~a.mask] * 0.35 + np.array([0, 0, 160]) * 0.65).astype(np.uint8)
    mask = np.repeat((a.mask * 255).astype(np.uint8)[..., None], 3, axis=2)
    tiles = [
        Image.fromarray(t).resize((w * scale, h * scale), Image.Resampling.NEAREST)
        for t in (rgb, flower, mask)
    ]
    swatches = _panel_swatches(a, h * scale)
    lines = [title, *(textwrap.fill(line, 150) for line in a.brief().splitlines())]
    text = "\n".join(lines)
    text_h = 14 * text.count("\n") + 24
    row = Image.new("RGB", (3 * w * scale + swatches.width, swatches.height + text_h), "white")
    for i, tile in enumerate(tiles):
        row.paste(tile, (i * w * scale, 0))
    row.paste(swatches, (3 * w * scale, 0))
    ImageDraw.Draw(row).multiline_text(
        (6, swatches.height + 6), text, fill="black", font=ImageFont.load_default(), spacing=3
    )
    return row


def test_contact_sheet(photos, capsys):
    """Write what the analysis sees, to look at: photo | flower | mask | swatches + brief."""
    out = Path(os.environ.get("REFPOOL_TEST_ARTIFACTS") or ROOT / "tests" / "artifacts")
    out = out / "photo_brief"
    out.mkdir(parents=True, exist_ok=True)
    ignore = out.parent / ".gitignore"
    if not ignore.exists():  # never committed: the folder ignores itself
        ignore.write_text("*\n")
    rows, briefs = [], []
    for kind in KINDS:
        for copy, path in zip(("sample", "imported"), photos[kind], strict=True):
            a = analyse_path(str(path))
            row = _row(path, a, f"{kind} ({copy}): {path.name}")
            row.save(out / f"{kind}-{copy}.png")
            (out / f"{kind}-{copy}.txt").write_text(a.brief() + "\n")
            rows.append(row)
            briefs.append(f"== {kind} ({copy}) ==\n{a.brief()}\n")
    sheet = Image.new("RGB", (max(r.width for r in rows), sum(r.height for r in rows)), "white")
    y = 0
    for row in rows:
        sheet.paste(row, (0, y))
        y += row.height
    sheet.save(out / "sheet.png")
    (out / "briefs.txt").write_text("\n".join(briefs))
    with capsys.disabled():
        print(f"\nphoto brief contact sheet: {out / 'sheet.png'} (briefs in {out / 'briefs.txt'})")
    assert Image.open(out / "sheet.png").size == sheet.size
    assert (out / "briefs.txt").read_text().count("Background") == 2 * len(KINDS)


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()
