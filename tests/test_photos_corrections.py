"""A photo's facts can be corrected and a photo withdrawn (issue 33, item 2): the next draft and
release use the correction, a frozen release keeps its own facts and files, a withdrawn photo's
paintings leave the next draft with the reason, and a re-import of a changed row says what
differs and the exact command that applies it."""

from __future__ import annotations

import json
import shlex

from factories import populate
from test_release_frozen import folder_bytes

from curation.ratings import record_rating
from pool.dataset.export import export_version
from pool.dataset.release import release
from pool.selection.draft import build_pool, save_draft
from refpool.cli import main
from refpool.core.store import releases
from refpool.core.store.photo_corrections import history
from refpool.core.store.photos import get_photo
from refpool.intake.photos import import_folder


def _rated(store, n=6):
    ids = populate(store, n)
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    return ids


def _rows(folder):
    lines = (folder / "metadata.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_correction_reaches_the_next_release_and_never_a_frozen_one(store, tmp_path, capsys):
    ids = _rated(store)
    save_draft(store, build_pool(store, target=len(ids), dup_threshold=0))
    first = release(store, version="1.0.0", with_diversity=False)
    before = export_version(store, tmp_path / "v1-before", first.version, progress=False)
    frozen_files = folder_bytes(before.out_dir)
    frozen_rows = releases.rows(store, "1.0.0")

    assert main(["photos", "update", "1", "--author", "Ana Lopez", "--licence", "CC BY-SA 4.0",
                 "--reason", "the author wrote to us"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "author: 'someone' -> 'Ana Lopez'" in out and "next `refpool pool build`" in out
    assert main(["photos", "withdraw", "2", "--reason", "the author withdrew the licence"]) == 0
    photo = get_photo(store, 1)
    assert (photo.author, photo.licence, photo.licence_version) == ("Ana Lopez", "CC-BY-SA", "4.0")
    assert [c.field for c in history(store, 1)] == ["licence", "licence_version", "author"]

    draft = build_pool(store, target=len(ids), dup_threshold=0)
    gone = [e for e in draft.excluded if e.reason == "withdrawn_photo"]
    assert gone and {e.photo_id for e in gone} == {2}
    assert all("the author withdrew the licence" in e.detail for e in gone)
    assert "its photo was withdrawn" in draft.summary()
    save_draft(store, draft)
    second = release(store, version="1.1.0", with_diversity=False)
    rows = _rows(export_version(store, tmp_path / "v2", second.version, progress=False).out_dir)
    from_photo_1 = [r for r in rows if r["reference_photo"] == "flower0.jpg"]
    assert from_photo_1 and all("Ana Lopez" in r["reference_photo_attribution"] for r in rows
                                if r["reference_photo"] == "flower0.jpg")  # fmt: skip
    assert all(r["licence"] == "cc-by-sa" for r in from_photo_1)
    assert not [r for r in rows if r["reference_photo"] == "flower1.jpg"]

    # the frozen version: the same rows and the same bytes, old author and withdrawn photo too
    assert releases.rows(store, "1.0.0") == frozen_rows
    again = export_version(store, tmp_path / "v1-after", "1.0.0", progress=False)
    assert folder_bytes(again.out_dir) == frozen_files
    old = _rows(again.out_dir)
    assert any(r["reference_photo"] == "flower1.jpg" for r in old)
    assert all("Ana Lopez" not in r["reference_photo_attribution"] for r in old)


def test_reimporting_a_changed_row_says_what_differs_and_how_to_apply_it(
    store, sample_photos, capsys
):
    import_folder(store, sample_photos)
    csv_path = sample_photos / "photos.csv"
    text = csv_path.read_text().replace("liz west (Flickr),CC BY 2.0", "Liz West,CC BY-SA 4.0")
    csv_path.write_text(text)
    assert main(["photos", "import", str(sample_photos)]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("CHANGED")]
    assert "rose_lizwest_12240303.jpg" in line
    assert "author 'liz west (Flickr)' -> 'Liz West'" in line and "Not applied" in line
    command = line.split("to apply it: ", 1)[1]
    assert command.startswith("refpool photos update ")
    assert get_photo(store, 3).author == "liz west (Flickr)"  # reported, not applied

    assert main(shlex.split(command)[1:]) == 0
    assert (get_photo(store, 3).author, get_photo(store, 3).licence) == ("Liz West", "CC-BY-SA")
    capsys.readouterr()
    assert main(["photos", "import", str(sample_photos)]) == 0
    assert "CHANGED" not in capsys.readouterr().out  # now the row and the record agree


def test_a_withdrawal_needs_a_reason_and_an_update_needs_a_change(store, sample_photos, capsys):
    import_folder(store, sample_photos)
    assert main(["photos", "withdraw", "1", "--reason", "  "]) != 0
    assert "needs its reason" in capsys.readouterr().err
    assert main(["photos", "update", "1"]) != 0
    assert "nothing to correct" in capsys.readouterr().err
    assert main(["photos", "update", "1", "--licence", "CC BY-NC 2.0"]) != 0
    assert "not open" in capsys.readouterr().err
