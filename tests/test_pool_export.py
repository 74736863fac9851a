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
from pool.export import ExportError, export_version
from pool.sampler import SamplerError, sample_references
from pool.selection import build_pool, save_draft
from pool.versions import release

ROOT = Path(__file__).resolve().parent.parent


def released(store, n=10, sa_photo=False):
    ids = populate(store, n)
    if sa_photo:
        photo = add_photo(store, "sa.jpg", licence="CC-BY-SA", url="https://example.org/sa")
        ids.append(add_candidate(store, photo, hue=0.42, seed=99))
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
        record_rating(store, cid, "bo", "love" if cid % 2 else "okay")
    save_draft(store, build_pool(store, target=len(ids), dup_threshold=0))
    return release(store, notes="test")


def load_offline(path: Path) -> dict:
    """Load with datasets in a fresh interpreter: HF_HUB_OFFLINE must be set before import."""
    code = (
        "import json, sys, datasets\n"
        "ds = datasets.load_dataset(sys.argv[1], split='train')\n"
        "img = ds[0]['file_name']\n"
        "print(json.dumps({'n': len(ds), 'columns': ds.column_names,"
        " 'tier_names': ds.features['tier'].names, 'size': list(img.size),"
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
    assert [p for p, _ in result.files] == ["README.md", "data/train-00000-of-00001.parquet"]
    shutil.rmtree(store.home / "blobs" / "png")  # the dataset must not need the store

    back = load_offline(out)
    assert back["n"] == 11
    published = {
        "file_name",
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
    assert back["tier_names"] == ["love", "okay"]
    assert back["size"] == [96, 96]
    assert sorted(back["ids"]) == sorted(pv.candidate_ids)
    names = ["love", "okay"]
    assert {i: names[t] for i, t in zip(back["ids"], back["tiers"], strict=True)} == {
        int(k): v for k, v in pv.tiers.items()
    }
    assert back["ratings"][0]["curator"] == "ana"
    assert back["source"].startswith("// test program")
    assert sorted(set(back["licences"])) == ["cc-by-4.0", "cc-by-sa-4.0"]

    card = (out / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["license"] == "cc-by-sa-4.0"
    assert meta["configs"][0]["data_files"][0]["path"] == "data/*.parquet"
    assert "share-alike" in card
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
    assert not list((tmp_path / "x").glob("data/*.parquet"))


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
