"""`refpool pool recalibrate --paintings DIR`: the ladder follows the policy in one command,
releases what moved with notes naming the film, and a rerun with the same film changes nothing."""

from __future__ import annotations

import json

from factories import png_bytes, populate

from curation.ratings import record_rating
from pool.dataset.release import release
from pool.selection.draft import build_pool, save_draft
from pool.selection.versions import list_versions
from refpool import cli
from refpool.core.store import calibration


def test_recalibrating_twice_with_one_film_makes_one_version(store, tmp_path, capsys):
    ids = populate(store, 12)
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    save_draft(store, build_pool(store, target=12, dup_threshold=0, rung_fraction=0.25))
    release(store, version="1.0.0", repo_id="ana/pool", with_diversity=False)
    film = tmp_path / "film"
    film.mkdir()
    for i in range(5):  # the policy's newest paintings: the same hue family, varied paint
        (film / f"step{i}.png").write_bytes(png_bytes(0.05 * i, seed=100 + i, blobs=2 + i))

    argv = ["pool", "recalibrate", "--paintings", str(film), "--judge", "heuristic", "--json"]
    assert cli.main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    versions = list_versions(store)
    assert [v.version for v in versions] == ["1.0.0", "1.1.0"] and first["released"] == "1.1.0"
    notes = versions[-1].notes
    assert first["film"]["sha256"][:12] in notes and "5 paintings" in notes
    assert f"{first['film_bytes']:,} bytes" in notes
    assert any(t == "rung" for t in versions[-1].tiers.values())
    assert first["moved"]["added"] or first["moved"]["retiered"]
    verdicts = len(calibration.all_pairs(store))

    # The same film again, the paintings renamed: every verdict is reused, nothing moves.
    for i in range(5):
        (film / f"step{i}.png").rename(film / f"renamed{i}.png")
    assert cli.main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["released"] is None and again["current"] == "1.1.0"
    assert again["film"] == first["film"]
    assert [v.version for v in list_versions(store)] == ["1.0.0", "1.1.0"]
    assert len(calibration.all_pairs(store)) == verdicts

    argv = argv[:-1]  # the words a person reads
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert "moves no reference: version 1.1.0 stays current" in captured.out
    assert "reused" in captured.err and "judge calls: none made" in captured.err


def test_calibrate_shows_its_verdicts_and_what_it_spent(store, capsys):
    ids = populate(store, 6)
    assert cli.main(["pool", "calibrate", "--judge", "heuristic", "--samples", "2"]) == 0
    err = capsys.readouterr().err
    assert "calibrate:" in err  # the bar
    assert "0 failed, 0 reused" in err and "judge calls: none made" in err
    assert cli.main(["pool", "calibrate", "--judge", "heuristic", "--samples", "2"]) == 0
    assert "0 done, 0 failed" in capsys.readouterr().err and ids


def test_recalibrate_without_a_draft_says_how_to_make_one(store, tmp_path, capsys):
    populate(store, 4)
    film = tmp_path / "film"
    film.mkdir()
    (film / "a.png").write_bytes(png_bytes(0.3, seed=1))
    code = cli.main(["pool", "recalibrate", "--paintings", str(film), "--judge", "heuristic"])
    err = capsys.readouterr().err
    assert code != 0 and "refpool pool build --mix" in err
