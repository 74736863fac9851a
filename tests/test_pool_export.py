"""Export to the Hub layout and load it back with `datasets`, offline, without the store's PNGs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from factories import add_candidate, add_photo, populate

from curation.ratings import record_rating
from pool.dataset.export import ExportError, export_version
from pool.dataset.release import release
from pool.dataset.sampler import SamplerError, sample_references
from pool.selection.draft import build_pool, save_draft

ROOT = Path(__file__).resolve().parent.parent


def released(store, n=10, sa_photo=False, **release_options):
    ids = populate(store, n)
    if sa_photo:
        photo = add_photo(store, "sa.jpg", licence="CC-BY-SA", url="https://example.org/sa")
        ids.append(add_candidate(store, photo, hue=0.42, seed=99))
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
        record_rating(store, cid, "bo", "love" if cid % 2 else "okay")
    save_draft(store, build_pool(store, target=len(ids), dup_threshold=0))
    return release(store, notes="test", **release_options)


def load_offline(path: Path) -> dict:
    """Load with datasets in a fresh interpreter: HF_HUB_OFFLINE must be set before import."""
    code = (
        "import json, sys, datasets\n"
        "ds = datasets.load_dataset(sys.argv[1], split='train')\n"
        "img = ds[0]['image']\n"
        "print(json.dumps({'n': len(ds), 'columns': ds.column_names,"
        " 'tier_type': str(ds.features['tier']), 'size': list(img.size),"
        " 'tiers': list(ds['tier']), 'ids': list(ds['candidate_id']), 'ratings': ds[0]['curator_ratings'],"
        " 'licences': list(ds['licence']), 'source': ds[0]['program_source']}))\n"
    )
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(path.parent / "hf-home"),
    }
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_round_trip_after_pngs_are_deleted(store, tmp_path):
    pv = released(store, 10, sa_photo=True)
    out = tmp_path / "export"
    result = export_version(store, out, progress=False)
    assert result.rows == 11 and result.version == "1.0.0"
    paths = [p for p, _ in result.files]
    assert paths[:3] == ["README.md", "images/love_000001.png", "images/love_000003.png"]
    assert {"metadata.jsonl", "photo_attribution.json"} <= set(paths)
    for png in (p for p in paths if p.startswith("images/")):
        stem = png.removeprefix("images/").removesuffix(".png")
        assert f"sources/{stem}.js" in paths  # every painting has its program
    rows = [json.loads(x) for x in (out / "metadata.jsonl").read_text().splitlines()]
    assert all(
        isinstance(r["file_name"], str) and r["file_name"].startswith("images/") for r in rows
    )
    assert all(r["file_name"] == f"images/{r['tier']}_{r['candidate_id']:06d}.png" for r in rows)
    assert all(r["hpsv3_mu"] is None for r in rows)
    assert {r["reference_photo_licence"] for r in rows} == {"cc-by", "cc-by-sa"}
    sa = next(r for r in rows if r["reference_photo"] == "sa.jpg")
    assert sa["licence"] == "cc-by-sa"
    assert sa["licence_url"] == "https://creativecommons.org/licenses/by-sa/4.0/"
    assert sa["attribution"].startswith('Watercolour painting adapted from the photo "sa.jpg"')
    credits = json.loads((out / "photo_attribution.json").read_text())
    assert {c["file"] for c in credits} == {r["reference_photo"] for r in rows}
    shutil.rmtree(store.home / "blobs" / "png")  # the dataset must not need the store

    back = load_offline(out)
    assert back["n"] == 11
    published = {
        "image",
        "source_file",
        "tier",
        "subject",
        "generator_model",
        "refinement_round",
        "hpsv3_mu",
        "paint_coverage",
        "gate_errors",
        "reference_photo",
        "reference_photo_licence",
        "reference_photo_attribution",
        "reference_photo_url",
    }
    extra = {
        "program_source",
        "seed",
        "renderer_versions",
        "critique_history",
        "curator_ratings",
        "candidate_id",
        "licence",
    }
    assert published | extra <= set(back["columns"])
    assert back["tier_type"] == "Value('string')"  # compares equal to "love", not a ClassLabel
    assert back["size"] == [96, 96]
    assert sorted(back["ids"]) == sorted(pv.candidate_ids)
    assert dict(zip(back["ids"], back["tiers"], strict=True)) == {
        int(k): v for k, v in pv.tiers.items()
    }
    assert back["ratings"][0]["curator"] == "ana"
    assert back["source"].startswith("// test program")
    assert sorted(set(back["licences"])) == ["cc-by", "cc-by-sa"]

    card = (out / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["license"] == "cc-by-sa-4.0"
    assert meta["task_categories"]
    assert meta["configs"][0]["data_files"][0]["path"] == ["metadata.jsonl", "images/*.png"]
    assert "share-alike" in card and "adapted from" in card
    assert "https://creativecommons.org/licenses/by/2.0/" in card  # the photos' licence deeds
    assert 'revision="v1.0.0"' in card and "WATERCOLOUR_POOL_REVISION" in card
    assert "no preference scorer was configured" in card
    for i in range(3):
        assert f"https://example.org/{i}" in card  # every photo's attribution
    assert "https://example.org/sa" in card
    assert "Vendi" in card


def test_unlicensed_photo_never_reaches_an_export(store, tmp_path):
    pv = released(store, 4)
    # The photo's licence is withdrawn after release: export must refuse, naming it.
    store.db.execute("UPDATE photos SET licence = 'All rights reserved' WHERE id = 1")
    with pytest.raises(ExportError, match="not an open licence"):
        export_version(store, tmp_path / "x", pv.version, progress=False)
    assert not (tmp_path / "x" / "metadata.jsonl").exists()
    assert not list((tmp_path / "x").glob("images/*.png"))


def test_sampler_is_deterministic_and_mixed(store, tmp_path):
    pv = released(store, 12)
    a = sample_references(store, pv.version, k=4, love=2, seed=7)
    b = sample_references(store, pv.version, k=4, love=2, seed=7)
    c = sample_references(store, pv.version, k=4, love=2, seed=8)
    assert a == b and a != c
    assert [r.tier for r in a].count("love") == 2 and len(a) == 4
    tiers = {int(k): v for k, v in pv.tiers.items()}
    assert all(tiers[r.candidate_id] == r.tier for r in a)
    out = tmp_path / "export"
    export_version(store, out, progress=False, with_diversity=False)
    from_export = sample_references(out, pv.version, k=4, love=2, seed=7)
    assert [r.candidate_id for r in from_export] == [r.candidate_id for r in a]
    assert from_export[0].png[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SamplerError, match="only"):
        sample_references(store, pv.version, k=40, love=20, seed=0)


def test_export_replaces_an_earlier_release_and_fills_scores_when_given(store, tmp_path):
    # The repo and the scores are part of the release: they are given when it is frozen.
    options = {"repo_id": "ana/pool", "scorer": "hpsv3-loopback", "with_diversity": False}
    pv = released(store, 6, preference_scores={1: 4.5}, **options)
    out = tmp_path / "export"
    (out / "images").mkdir(parents=True)
    (out / "images" / "love_999999.png").write_bytes(b"stale")  # an older release's image
    (out / "data").mkdir()
    (out / "data" / "train-00000-of-00001.parquet").write_bytes(b"stale")
    first = min(pv.candidate_ids)
    assert first == 1
    export_version(store, out, progress=False, repo_id="ana/pool")
    assert not (out / "images" / "love_999999.png").exists() and not (out / "data").exists()
    rows = {r["candidate_id"]: r for r in map(json.loads, (out / "metadata.jsonl").open())}
    assert rows[first]["hpsv3_mu"] == 4.5
    assert all(r["hpsv3_mu"] is None for c, r in rows.items() if c != first)
    card = (out / "README.md").read_text()
    assert "`hpsv3_mu` is the preference score from `hpsv3-loopback`" in card
    assert 'load_dataset("ana/pool", revision="v1.0.0"' in card


def test_export_refuses_a_folder_that_is_not_a_release(store, tmp_path):
    released(store, 4)
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("my own project")
    (project / "notes.txt").write_text("keep me")
    with pytest.raises(ExportError, match="not a refpool release"):
        export_version(store, project, progress=False, with_diversity=False)
    assert (project / "README.md").read_text() == "my own project"
    only_readme = tmp_path / "only-readme"
    only_readme.mkdir()
    (only_readme / "README.md").write_text("mine")
    with pytest.raises(ExportError, match="choose an empty or new folder"):
        export_version(store, only_readme, progress=False, with_diversity=False)
    assert (only_readme / "README.md").read_text() == "mine"
