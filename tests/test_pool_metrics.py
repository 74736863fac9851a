"""Metrics on crafted inputs whose right answers are known."""

from __future__ import annotations

import colorsys
import io
import math

import numpy as np
import pytest
from factories import add_photo, png_bytes
from PIL import Image, ImageDraw

from curation.ratings import record_rating
from pool.diversity import metrics as m
from pool.diversity.analysis import analyse
from pool.similarity.clusters import hamming_matrix, near_duplicate_clusters
from pool.similarity.features import compute_features
from refpool.core.store import candidates


def solid(rgb, size=128) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (size, size), rgb).save(buf, "PNG")
    return buf.getvalue()


def halves(a, b, ground=(250, 248, 240), size=128) -> bytes:
    """Pale ground with two painted discs: one of colour a, one of colour b, equal areas."""
    img = Image.new("RGB", (size, size), ground)
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, size // 2 - 1, size // 4 - 1), fill=a)
    draw.rectangle((size // 2, 0, size - 1, size // 4 - 1), fill=b)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def rainbow(size=360) -> bytes:
    img = Image.new("RGB", (size, size))
    px = img.load()
    for x in range(size):
        r, g, b = colorsys.hsv_to_rgb(x / size, 0.9, 0.9)
        for y in range(size):
            px[x, y] = (int(r * 255), int(g * 255), int(b * 255))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def test_hamming_matrix_counts_differing_bits():
    d = hamming_matrix([0, 0b1011, (1 << 64) - 1])
    assert d.tolist() == [[0, 3, 64], [3, 0, 61], [64, 61, 0]]


def test_identical_images_have_vendi_one():
    f = compute_features(png_bytes(0.3, size=128, seed=4))
    d = hamming_matrix([f.phash] * 10)
    assert m.vendi_score(m.hash_kernel(d)) == pytest.approx(1.0)
    assert m.vendi_score(m.cosine_kernel(np.array([f.colour_hist] * 10))) == pytest.approx(1.0)
    assert near_duplicate_clusters(d, 0) == [list(range(10))]


def test_orthogonal_items_count_fully():
    assert m.vendi_score(np.eye(7)) == pytest.approx(7.0)
    # two groups of identical items, unrelated to each other: two distinct things
    k = np.kron(np.eye(2), np.ones((5, 5)))
    assert m.vendi_score(k) == pytest.approx(2.0)


def test_two_colours_only():
    red, blue = (220, 30, 30), (30, 40, 220)
    f = compute_features(halves(red, blue))
    assert m.entropy_bits(f.hue_hist) == pytest.approx(1.0, abs=0.02)
    assert m.hue_coverage(f.hue_hist) == pytest.approx(2 / 36)
    assert {c for c, _ in f.palette} == {"#dc1e1e", "#1e28dc"}
    assert len(f.palette) == 2 and sum(s for _, s in f.palette) == pytest.approx(1.0, abs=0.01)
    a, b = compute_features(solid(red)), compute_features(solid(blue))
    # Single flat colours: each is its own background, so neither has paint -> one class.
    assert m.vendi_score(
        m.cosine_kernel(np.array([a.colour_hist, b.colour_hist]))
    ) == pytest.approx(1.0)
    reds = compute_features(halves(red, red))
    blues = compute_features(halves(blue, blue))
    hists = np.array([reds.colour_hist] * 3 + [blues.colour_hist] * 3)
    assert m.vendi_score(m.cosine_kernel(hists)) == pytest.approx(2.0, abs=1e-6)


def test_rainbow_has_high_hue_entropy():
    f = compute_features(rainbow())
    assert m.entropy_bits(f.hue_hist) > 0.97 * math.log2(36)
    assert m.hue_coverage(f.hue_hist) == 1.0
    grey = compute_features(solid((128, 128, 128)))
    assert m.entropy_bits(grey.hue_hist) == 0.0 and grey.saturated_share == 0.0


def test_coverage_stats_against_published_range():
    stats = m.coverage_stats([0.01, 0.1, 0.2, 0.3, 0.9, None])
    assert stats.n == 5 and stats.median == 0.2
    assert stats.in_published_range == pytest.approx(0.6)


def test_analysis_over_a_store(store):
    photo = add_photo(store)
    tiers = {}
    for i, hue in enumerate([0.0, 0.0, 0.33, 0.66]):
        png = png_bytes(hue, size=128, seed=1 if i < 2 else i)  # first two identical
        sha = store.put_png(png)
        cid = candidates.save(
            store,
            {
                "job_key": f"k{i}",
                "photo_id": photo,
                "generator": "g",
                "round": i % 2,
                "seed": i,
                "accepted": 1,
                "coverage": 0.2 + i / 10,
                "png_sha": sha,
            },
        )
        record_rating(store, cid, "ana", "love" if i % 2 else "okay")
        tiers[cid] = "love" if i % 2 else "okay"
    a = analyse(store, tiers, label="t", threshold=4)
    assert a.metrics.n == 4
    assert a.metrics.counts.tier == {"love": 2, "okay": 2}
    assert a.metrics.near_duplicates.clusters == [[1, 2]]
    assert a.metrics.distance.min == 0
    assert 1.0 < a.metrics.vendi.hash < 4.0
    assert set(a.metrics.per_tier) == {"love", "okay"}
    # cached: a second run reads features from the table
    assert store.query("SELECT COUNT(*) AS n FROM image_features")[0]["n"] == 3


def test_near_duplicate_clusters_do_not_chain():
    """Images 0..7 in a line, 10 apart: neighbours are near-duplicates, the ends are not.

    Connected components put all eight in one cluster, and a leader rule lets two members sit
    20 apart (either side of the leader). Every two members of a cluster must be within the
    threshold of each other.
    """
    pos = np.arange(8) * 10
    d = np.abs(pos[:, None] - pos[None, :])
    clusters = near_duplicate_clusters(d, 10)
    assert clusters and all(len(c) == 2 for c in clusters)
    for c in clusters:
        assert d[np.ix_(c, c)].max() <= 10
    members = [i for c in clusters for i in c]
    assert len(members) == len(set(members)) == 8


def test_six_paintings_linked_by_near_pairs_stay_apart():
    """The issue's case: six paintings where each is near the next (a chain), and one true
    duplicate pair. Only the duplicate pair may form a cluster of its own that mixes nothing."""
    d = np.full((7, 7), 40.0)
    for i in range(5):  # 0-1-2-3-4-5 each near its neighbour only
        d[i, i + 1] = d[i + 1, i] = 18.0
    d[5, 6] = d[6, 5] = 3.0  # 6 repaints 5
    np.fill_diagonal(d, 0)
    clusters = near_duplicate_clusters(d, 20)
    for c in clusters:
        assert d[np.ix_(c, c)].max() <= 20
    assert max(len(c) for c in clusters) == 2
    assert [5, 6] in clusters
