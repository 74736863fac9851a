"""Photo library: the samples, licence spellings, and every kind of bad file in one batch."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest
from conftest import SAMPLES
from PIL import Image, ImageDraw

from refpool.cli import main
from refpool.core.store.photos import list_photos, photo_file
from refpool.intake.photos import LicenceError, import_folder, normalise_licence

HEADER = ["file", "source", "author", "license", "notes", "subject"]


def flower(size=(400, 300), hue=(220, 80, 60), seed=0) -> Image.Image:
    img = Image.new("RGB", size, (40, 90 + seed * 7 % 60, 50))
    draw = ImageDraw.Draw(img)
    w, h = size
    for k in range(6):
        dx, dy = [(0, -1), (1, -0.5), (1, 0.5), (0, 1), (-1, 0.5), (-1, -0.5)][k]
        cx, cy = w / 2 + dx * h * 0.18, h / 2 + dy * h * 0.18
        draw.ellipse((cx - h * 0.14, cy - h * 0.14, cx + h * 0.14, cy + h * 0.14), fill=hue)
    draw.ellipse((w / 2 - 20 - seed, h / 2 - 20, w / 2 + 20, h / 2 + 20), fill=(240, 200, 40))
    return img


def jpeg(img: Image.Image, **kw) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=90, **kw)
    return buf.getvalue()


def write_csv(folder, rows):
    with (folder / "photos.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        writer.writerows(rows)


def row(name, licence="CC BY 2.0"):
    return [name, f"https://example.org/{name}", "Jane Doe", licence, "", "flower"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("CC BY 2.0", ("CC-BY", "2.0")),
        ("cc-by-sa-4.0", ("CC-BY-SA", "4.0")),
        ("https://creativecommons.org/licenses/by-sa/3.0/", ("CC-BY-SA", "3.0")),
        ("cc0", ("CC0", "1.0")),
        ("CC0 1.0 Universal", ("CC0", "1.0")),
        ("Public Domain", ("PD", "")),
        ("Attribution 4.0 International", ("CC-BY", "4.0")),
    ],
)
def test_open_licence_spellings_normalise(text, expected):
    assert normalise_licence(text) == expected


@pytest.mark.parametrize(
    "text", ["CC BY-NC 2.0", "cc-by-nd", "CC BY-NC-SA 4.0", "All rights reserved", "", "GPL"]
)
def test_closed_or_unknown_licences_are_refused(text):
    with pytest.raises(LicenceError):
        normalise_licence(text)


def test_samples_import_and_rerun_is_harmless(store, sample_photos):
    report = import_folder(store, sample_photos)
    assert report.ok and len(report.imported) == 3
    photos = list_photos(store)
    assert {p.licence for p in photos} == {"CC-BY"}
    assert all(p.source_url.startswith("https://www.flickr.com/") for p in photos)
    assert all(photo_file(store, p).is_file() for p in photos)
    again = import_folder(store, sample_photos)
    assert again.ok and not again.imported and len(again.already) == 3
    assert len(list_photos(store)) == 3


def test_bad_files_never_abort_the_batch(store, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "good.jpg").write_bytes(jpeg(flower()))
    (folder / "corrupt.jpg").write_bytes(jpeg(flower(seed=3))[:400])
    (folder / "notes.jpg").write_text("this is not an image")
    (folder / "closed.jpg").write_bytes(jpeg(flower(seed=5, hue=(90, 60, 200))))
    (folder / "unlisted.jpg").write_bytes(jpeg(flower(seed=6)))
    (folder / "tiny.png").write_bytes(_png(flower(size=(100, 80))))
    cmyk = flower(size=(300, 300), hue=(200, 40, 160), seed=9).convert("CMYK")
    (folder / "cmyk.jpg").write_bytes(jpeg(cmyk))
    (folder / "grey.png").write_bytes(_png(_stripes((320, 240)).convert("L")))
    rgba = _rings((300, 300)).convert("RGBA")
    rgba.putalpha(Image.new("L", rgba.size, 128))
    (folder / "alpha.png").write_bytes(_png(rgba))
    (folder / "huge.jpg").write_bytes(jpeg(_checks((3200, 2400))))
    # EXIF orientation 6 (rotate 90 CW to display): stored 400x300, displayed 300x400
    exif = Image.Exif()
    exif[0x0112] = 6
    (folder / "rotated.jpg").write_bytes(jpeg(_diagonal((400, 300)), exif=exif.tobytes()))
    shutil.copy(folder / "good.jpg", folder / "good_copy.jpg")  # exact duplicate in the batch
    with Image.open(SAMPLES / "dahlia_vultilion_6056698931.jpg") as real:
        (folder / "dahlia.jpg").write_bytes(jpeg(real))
        near = real.resize((560, 374)).crop((4, 3, 556, 371))  # resized, cropped, re-encoded
        (folder / "near.jpg").write_bytes(jpeg(near, optimize=True))
    write_csv(
        folder,
        [
            row("good.jpg"),
            row("corrupt.jpg"),
            row("notes.jpg"),
            row("closed.jpg", "CC BY-NC 2.0"),
            row("missing.jpg"),
            row("tiny.png"),
            row("cmyk.jpg", "cc0"),
            row("grey.png", "public domain"),
            row("alpha.png", "CC-BY-SA 4.0"),
            row("huge.jpg"),
            row("rotated.jpg"),
            row("good_copy.jpg"),
            row("dahlia.jpg"),
            row("near.jpg"),
        ],
    )
    report = import_folder(store, folder)
    refused = dict(report.refused)
    imported = {p.file_name: p for p in report.imported}
    assert set(imported) == {
        "good.jpg",
        "cmyk.jpg",
        "grey.png",
        "alpha.png",
        "huge.jpg",
        "rotated.jpg",
        "dahlia.jpg",
    }
    assert set(refused) == {
        "corrupt.jpg",
        "notes.jpg",
        "closed.jpg",
        "missing.jpg",
        "unlisted.jpg",
        "tiny.png",
        "good_copy.jpg",
        "near.jpg",
    }
    assert "corrupt" in refused["corrupt.jpg"] or "readable" in refused["corrupt.jpg"]
    assert "not a readable image" in refused["notes.jpg"]
    assert "not open" in refused["closed.jpg"]
    assert "missing from the folder" in refused["missing.jpg"]
    assert "not listed in photos.csv" in refused["unlisted.jpg"]
    assert "too small" in refused["tiny.png"] and "128" in refused["tiny.png"]
    assert "duplicate" in refused["near.jpg"] and "duplicate" in refused["good_copy.jpg"]
    assert (imported["huge.jpg"].width, imported["huge.jpg"].height) == (1600, 1200)
    assert (imported["rotated.jpg"].width, imported["rotated.jpg"].height) == (300, 400)
    assert imported["cmyk.jpg"].licence == "CC0"
    for p in imported.values():
        with Image.open(photo_file(store, p)) as img:
            assert img.mode == "RGB"
    with Image.open(photo_file(store, imported["alpha.png"])) as img:
        assert img.getpixel((0, 0))[0] > 120  # half-transparent paint over white, not black
    rows = store.query(
        "SELECT licence, licence_version, extra FROM photos WHERE file_name = 'alpha.png'"
    )
    assert (rows[0]["licence"], rows[0]["licence_version"]) == ("CC-BY-SA", "4.0")
    assert json.loads(rows[0]["extra"])["original_size"] == [300, 300]


def test_cli_import_exits_1_when_anything_is_refused(tmp_path, capsys, refpool_home):
    folder = tmp_path / "cli"
    folder.mkdir()
    (folder / "a.jpg").write_bytes(jpeg(flower()))
    (folder / "b.jpg").write_bytes(jpeg(flower(seed=4, hue=(30, 30, 200))))
    write_csv(folder, [row("a.jpg"), row("b.jpg", "All rights reserved")])
    assert main(["photos", "import", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "REFUSED   b.jpg" in out and "imported 1" in out
    assert main(["photos", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [p["file_name"] for p in listed] == ["a.jpg"]


def test_missing_manifest_is_a_clear_error(store, tmp_path):
    with pytest.raises(FileNotFoundError, match="photos.csv"):
        import_folder(store, tmp_path)


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


# Distinct structures, so near-duplicate detection does not (rightly) flag the test images.
def _stripes(size):
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    for x in range(0, size[0], 40):
        draw.rectangle((x, 0, x + 20, size[1]), fill=(30, 30, 30))
    return img


def _rings(size):
    img = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(img)
    for r in range(150, 0, -30):
        c = 200 if (r // 30) % 2 else 20
        draw.ellipse((150 - r, 150 - r, 150 + r, 150 + r), fill=(c, 20, 20))
    return img


def _checks(size):
    img = Image.new("RGB", size, (240, 240, 200))
    draw = ImageDraw.Draw(img)
    step = size[0] // 6
    for i in range(6):
        for j in range(6):
            if (i + j) % 2:
                draw.rectangle(
                    (i * step, j * step, (i + 1) * step, (j + 1) * step), fill=(20, 60, 160)
                )
    return img


def _diagonal(size):
    img = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(img)
    draw.polygon([(0, 0), (size[0], 0), (0, size[1])], fill=(10, 120, 30))
    return img


def test_cli_reports_a_malformed_manifest(tmp_path, capsys):
    (tmp_path / "photos.csv").write_text("file,author\na.jpg,me\n")
    assert main(["photos", "import", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "missing column(s) source, license" in err


# -- subjects are data, and everything read is shown first (issue 33, item 1) ---------------
def _unnamed_folder(tmp_path):
    """Two photos whose file names start with words that are no subject, and no subject column."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "rotated_1.jpg").write_bytes(jpeg(_stripes((320, 240))))
    (folder / "huge_2.jpg").write_bytes(jpeg(_rings((300, 300))))
    (folder / "photos.csv").write_text(
        "file,source,author,license\n"
        "rotated_1.jpg,https://example.org/r (via a friend),Ana,CC BY 4.0\n"
        "huge_2.jpg,https://example.org/h,Ana,cc0\n"
    )
    return folder


def test_a_subject_is_never_guessed_from_the_file_name(store, tmp_path):
    folder = _unnamed_folder(tmp_path)
    report = import_folder(store, folder)
    assert not report.imported and not list_photos(store)
    refused = dict(report.refused)
    assert set(refused) == {"rotated_1.jpg", "huge_2.jpg"}
    assert all("no subject" in why and "none is guessed" in why for why in refused.values())
    given = import_folder(store, folder, subject="poppy")
    assert given.ok and {p.subject for p in given.imported} == {"poppy"}


def test_the_subject_column_wins_over_subject_option(store, tmp_path):
    folder = _unnamed_folder(tmp_path)
    csv_text = (folder / "photos.csv").read_text().splitlines()
    rows = [csv_text[0] + ",subject", csv_text[1] + ",tulip", csv_text[2] + ","]
    (folder / "photos.csv").write_text("\n".join(rows) + "\n")
    report = import_folder(store, folder, subject="poppy")
    assert {p.file_name: p.subject for p in report.imported} == {
        "rotated_1.jpg": "tulip",
        "huge_2.jpg": "poppy",
    }


def test_dry_run_shows_every_fact_and_stores_nothing(tmp_path, capsys, refpool_home):
    folder = _unnamed_folder(tmp_path)
    assert main(["photos", "import", str(folder), "--dry-run", "--subject", "poppy"]) == 0
    out = capsys.readouterr().out
    assert "rotated_1.jpg: import: 320x240 px" in out
    assert "subject  poppy  (from --subject)" in out
    assert "licence  CC-BY 4.0  (read from 'CC BY 4.0')" in out
    assert "note     (via a friend)" in out and "author   Ana" in out
    assert "would import 2" in out and "nothing stored" in out
    assert main(["photos", "import", str(folder)]) == 1  # no subject, none guessed: refused
    assert "2 photo(s) have no subject" in capsys.readouterr().out
    assert main(["photos", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert not (refpool_home / "photos").exists()


def test_import_help_lists_every_column_and_where_it_goes(capsys):
    with pytest.raises(SystemExit):
        main(["photos", "import", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for column in ("file", "source", "author", "license", "notes", "subject"):
        assert f" {column} " in text
    assert "never guessed from the file name" in text and "--dry-run" in text
    assert "stored as:" in text and "photos.subject" in text


def test_the_samples_import_with_their_subjects(store, sample_photos):
    report = import_folder(store, sample_photos)
    assert {p.subject for p in report.imported} == {"dahlia", "daisy", "rose"}


def test_at_a_terminal_the_import_asks_for_a_subject_and_needs_a_yes(
    tmp_path, capsys, monkeypatch, store
):
    from refpool.intake import cli as intake_cli

    folder = _unnamed_folder(tmp_path)
    monkeypatch.setattr(intake_cli, "_at_terminal", lambda: True)
    answers = iter(["red poppy", "n"])  # named, then not confirmed: nothing is recorded
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["photos", "import", str(folder)]) == 1
    assert not list_photos(store)
    answers = iter(["red poppy", "y"])
    assert main(["photos", "import", str(folder)]) == 0
    assert {p.subject for p in list_photos(store)} == {"red poppy"}
    assert "no subject for some photos (nothing is guessed)" in capsys.readouterr().out
