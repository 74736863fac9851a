"""`python -m pool.similarity.threshold` prints what it computed: its table and suggestion follow from
the distances of the paintings it was given, pair kind by pair kind."""

from __future__ import annotations

import json

import numpy as np
import pytest
from factories import png_bytes

from pool.similarity import chains as ch
from pool.similarity import threshold as cal


def painting(chain: str, photo: str, round_: int, seed: int, png: bytes, parent=None):
    return ch.Painting(
        name=f"{chain}/r{round_}/s{seed}",
        chain=chain,
        photo=photo,
        source_photo=photo.split("~")[0],
        round=round_,
        seed=seed,
        parent=parent,
        png=png,
    )


@pytest.fixture
def paintings():
    """Two chains of one photo, one of its recoloured copy, one of another photo."""
    out = []
    for chain, photo, hue, base in (
        ("rose/p0", "rose", 0.95, 1),
        ("rose/p1", "rose", 0.95, 40),
        ("rose~120/p0", "rose~120", 0.3, 1),
        ("daisy/p0", "daisy", 0.6, 7),
    ):
        out.append(painting(chain, photo, 0, 0, png_bytes(hue, 128, seed=base)))
        out.append(painting(chain, photo, 0, 1, png_bytes(hue + 0.01, 128, seed=base)))
        out.append(
            painting(chain, photo, 1, 0, png_bytes(hue, 128, seed=base, blobs=7), out[-2].name)
        )
    return out


def test_pair_kinds(paintings):
    kinds = {(paintings[i].name, paintings[j].name): k for i, j, k in ch.pairs(paintings)}
    assert kinds[("rose/p0/r0/s0", "rose/p0/r0/s1")] == "seed"
    assert kinds[("rose/p0/r0/s0", "rose/p0/r1/s0")] == "revision"
    assert kinds[("rose/p0/r0/s1", "rose/p0/r1/s0")] == "chain"  # another seed of the parent
    assert kinds[("rose/p0/r0/s0", "rose/p1/r0/s0")] == "program"
    assert kinds[("rose/p0/r0/s0", "rose~120/p0/r0/s0")] == "recoloured"
    assert kinds[("rose/p0/r0/s0", "daisy/p0/r0/s0")] == "photo"


def test_the_table_is_what_the_distances_say(paintings, tmp_path, capsys):
    result = cal.calibrate(paintings)
    d = cal.distances(paintings)["similarity"]
    pairs = ch.pairs(paintings)
    for kind in ("seed", "revision", "program", "recoloured", "photo"):
        values = [d[i, j] for i, j, k in pairs if k == kind]
        row = result["measures"]["similarity"][kind]
        assert row["n"] == len(values) == result["pairs"][kind]
        assert row["max"] == round(max(values), 2) and row["min"] == round(min(values), 2)
    best = result["measures"]["similarity"]["best"]
    dup = np.array([d[i, j] for i, j, k in pairs if k in ch.DUPLICATE_KINDS])
    distinct = np.array([d[i, j] for i, j, k in pairs if k in ch.DISTINCT_KINDS])
    assert best["duplicates_found"] == int((dup <= best["threshold"]).sum())
    assert best["distinct_merged"] == int((distinct <= best["threshold"]).sum())
    assert result["suggested_threshold"] == int(best["threshold"])  # rounded down

    # the command prints the same numbers from saved paintings, and writes them as JSON
    ch.save(paintings, tmp_path / "set")
    assert cal.main(["--load", str(tmp_path / "set"), "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text()) == json.loads(json.dumps(result))
    assert f"(similarity, 0..100): {result['suggested_threshold']}" in out
    assert f"| similarity (best) | {best['threshold']} |" in out


def test_best_threshold_sits_in_the_gap_and_keeps_photos_apart():
    assert cal.best_threshold(np.array([2.0, 5.0, 9.0]), np.array([21.0, 30.0])) == 15.0
    # balanced error: one merged pair of 4 costs as much as one missed duplicate of 4
    dup, distinct = np.array([2.0, 5.0, 9.0, 12.0]), np.array([10.0, 30.0, 31.0, 40.0, 41.0])
    assert cal.best_threshold(dup, distinct) == 21.0  # finds all 4 and merges 1 of 5
    # ...unless that would merge paintings of different photos: then it stays below them
    assert cal.best_threshold(dup, distinct, never=np.array([11.0])) == 9.5
