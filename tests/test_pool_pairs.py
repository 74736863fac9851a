"""The report at scale: tiled pair scans, clusters from neighbour lists, Vendi from the small
Gram matrix, and the metrics as records. Each is checked against the dense computation it
replaces, on data small enough for that to be cheap."""

from __future__ import annotations

import json

import numpy as np
import pytest
from factories import add_candidate, add_photo
from PIL import UnidentifiedImageError

from pool.diversity import metrics as m
from pool.diversity.analysis import analyse
from pool.diversity.report import write_report
from pool.similarity import distance as sim
from pool.similarity import pairs
from pool.similarity.clusters import NearPairs, clusters_from_pairs, hash_bits


def dense_reference(distances: np.ndarray, threshold: float) -> list[list[int]]:
    """The n x n greedy complete linkage as it was before neighbour lists (brute force)."""
    near = distances <= threshold
    np.fill_diagonal(near, False)
    unassigned = np.ones(distances.shape[0], bool)
    clusters = []
    while True:
        counts = near[:, unassigned].sum(axis=1) * unassigned  # recounted: slow but plain
        seed = int(counts.argmax())
        if counts[seed] == 0:
            break
        members = [seed]
        for j in sorted(
            np.nonzero(near[seed] & unassigned)[0].tolist(), key=lambda j: (distances[seed, j], j)
        ):
            if all(near[j, k] for k in members):
                members.append(j)
        unassigned[members] = False
        clusters.append(sorted(members))
    return sorted(clusters, key=lambda g: (-len(g), g[0]))


@pytest.mark.parametrize("seed", range(40))
def test_clusters_from_neighbour_lists_match_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    # Small integers: many equal distances, so seed choice and join order hit their tie rules.
    d = rng.integers(0, 12, size=(n, n)).astype(float)
    d = np.minimum(d, d.T)
    np.fill_diagonal(d, 0)
    threshold = float(rng.integers(1, 6))
    got = clusters_from_pairs(NearPairs.from_matrix(d, threshold))
    assert got == dense_reference(d, threshold)
    for g in got:  # complete linkage: every two members are near
        assert d[np.ix_(g, g)].max() <= threshold


def random_signatures(n: int, seed: int = 0) -> list[sim.Signature]:
    """Random paintings plus near copies and exact copies (distance 0)."""
    rng = np.random.default_rng(seed)
    out: list[sim.Signature] = []
    for i in range(n):
        if out and i % 5 == 4:
            s = out[int(rng.integers(len(out)))]
            if i % 10 == 4:
                out.append(s)  # an exact copy
                continue
            c = s.colour * (1 + 0.05 * rng.random(s.colour.shape))
            lay = s.layout + 0.004 * rng.random(s.layout.shape)
            out.append(
                sim.Signature((c / c.sum()).astype(np.float32), lay.astype(np.float32), s.texture)
            )
            continue
        c = rng.random(sim.COLOUR_SIZE) ** 8
        t = np.concatenate([rng.dirichlet(np.ones(8)), rng.dirichlet(np.ones(8))])
        lay = rng.random((sim.LAYOUT_SIDE, sim.LAYOUT_SIDE, 3)) * 0.3 + 0.5
        out.append(
            sim.Signature(
                (c / c.sum()).astype(np.float32), lay.astype(np.float32), t.astype(np.float32)
            )
        )
    return out


def test_tiled_scan_matches_the_dense_matrix(monkeypatch):
    monkeypatch.setattr(pairs, "TILE", 16)  # many tiles, ragged edges, diagonal tiles
    sigs = random_signatures(70)
    d = sim.distance_matrix(sigs)
    n = len(sigs)
    scan = pairs.scan_pairs(sigs, 4.0)
    iu = np.triu_indices(n, k=1)
    upper = d[iu]
    near = {(i, j) for i, j in zip(*iu, strict=True) if d[i, j] <= 4.0}
    got = {(i, int(j)) for i in range(n) for j in scan.near.neighbours(i)[0] if i < j}
    assert got == near and len(near) > 5
    for i, j in near:  # float64 distances: both sides carry only float64 rounding noise
        cols, dists = scan.near.neighbours(i)
        assert dists[list(cols).index(j)] == pytest.approx(d[i, j], abs=1e-4)
    st = scan.stats
    assert st.count == len(upper)
    assert st.minimum == pytest.approx(upper.min(), abs=1e-4)  # exact copies: 0 to 1e-2
    assert st.mean == pytest.approx(upper.mean(), abs=1e-3)
    assert abs(st.median - np.median(upper)) <= 1 / pairs.FINE
    hist = st.histogram(50)
    assert sum(hist) == len(upper)
    assert np.abs(np.array(hist) - m.distance_histogram(d)).sum() <= 2  # float32 at bin edges
    assert clusters_from_pairs(scan.near) == dense_reference(d, 4.0)


def test_scan_statistics_over_a_subset_and_its_near_pairs(monkeypatch):
    monkeypatch.setattr(pairs, "TILE", 16)
    sigs = random_signatures(50, seed=3)
    d = sim.distance_matrix(sigs)
    chosen = np.arange(50) % 3 != 0
    scan = pairs.scan_pairs(sigs, 4.0, stats_of=chosen)
    idx = np.nonzero(chosen)[0]
    sub = d[np.ix_(idx, idx)][np.triu_indices(len(idx), k=1)]
    assert scan.stats.count == len(sub)
    assert abs(scan.stats.median - np.median(sub)) <= 1 / pairs.FINE
    restricted = scan.near.subset(idx)
    expected = NearPairs.from_matrix(d[np.ix_(idx, idx)], 4.0)
    assert restricted.n_pairs == expected.n_pairs
    assert np.array_equal(restricted.cols, expected.cols)
    assert np.array_equal(restricted.starts, expected.starts)


def test_median_of_an_even_and_an_odd_count():
    fine = np.zeros(pairs.TOP * pairs.FINE + 1, np.int64)
    fine[[10_000, 20_000, 30_000]] = 1  # 10, 20, 30
    odd = pairs.PairStats(3, 60.0, 10.0, fine)
    assert odd.median == pytest.approx(20.0, abs=1 / pairs.FINE)
    fine[40_000] = 1
    even = pairs.PairStats(4, 100.0, 10.0, fine)
    assert even.median == pytest.approx(25.0, abs=1 / pairs.FINE)


def test_vendi_from_the_gram_matrix_equals_the_kernel_eigenvalues():
    rng = np.random.default_rng(1)
    bits = hash_bits([int(x) for x in rng.integers(0, 2**63, size=150, dtype=np.int64)])
    bits[100:] = bits[:50]  # some identical hashes
    flipped = 1.0 - bits
    hamming = bits @ flipped.T + flipped @ bits.T
    exact = m.vendi_score(m.hash_kernel(hamming))
    assert m.vendi_of_rows(m.hash_rows(bits)) == pytest.approx(exact, rel=1e-9)
    hists = rng.random((600, 40)) ** 4  # n > d: the Gram path
    hists[::7] = 0
    hists[::7, 0] = 1
    exact = m.vendi_score(m.cosine_kernel(hists))
    assert m.vendi_of_rows(m.cosine_rows(hists)) == pytest.approx(exact, rel=1e-9)
    assert m.vendi_of_rows(np.zeros((0, 5))) == 0.0


@pytest.fixture
def stocked(store):
    rose, daisy = add_photo(store, "rose.jpg"), add_photo(store, "daisy.jpg", url="https://e.org/2")
    ids = [
        add_candidate(store, rose, "procedural", round_=0, hue=0.95, seed=3),
        add_candidate(store, rose, "procedural", round_=1, hue=0.95, seed=3),  # same pixels
        add_candidate(store, rose, "glm-x", hue=0.15, seed=11),
        add_candidate(store, daisy, "procedural", hue=0.55, seed=12),
        add_candidate(store, daisy, "glm-x", hue=0.75, seed=13),
    ]
    return store, {c: ("love" if i % 2 else "okay") for i, c in enumerate(ids)}


def test_metrics_records_write_the_same_json_keys(stocked, tmp_path):
    store, tiers = stocked
    result = write_report(
        store, tmp_path / "r.html", tiers, "t", json_out=tmp_path / "m.json", progress=False
    )
    data = json.loads((tmp_path / "m.json").read_text())
    assert set(data) >= {
        "label",
        "n",
        "counts",
        "shares",
        "tier_by",
        "distance",
        "near_duplicates",
        "hue",
        "palette",
        "vendi",
        "coverage",
        "per_tier",
        "reward",
        "all_candidates",
    }
    assert set(data["distance"]) == {
        "measure",
        "threshold",
        "histogram",
        "min",
        "median",
        "mean",
        "pairs_within_threshold",
    }
    assert set(data["coverage"]) == {
        "n",
        "median",
        "min",
        "max",
        "p10",
        "p90",
        "in_published_range",
        "histogram",
        "published_love",
    }
    assert set(data["per_tier"]["love"]) == {"n", "vendi", "hue", "coverage", "palette"}
    assert data["vendi"] == {
        "hash": result.metrics.vendi.hash,
        "colour": result.metrics.vendi.colour,
    }
    assert data["near_duplicates"]["n_clusters"] == 1 and data["distance"]["min"] == 0
    assert data["distance"]["pairs_within_threshold"] == 1
    # the report's one scan of all candidates gives the selection the same numbers as its own
    alone = analyse(store, tiers, label="t").metrics.to_dict()
    assert {k: v for k, v in data.items() if k in alone} == json.loads(json.dumps(alone))


def test_features_are_saved_in_batches_so_an_interrupted_run_keeps_them(store, monkeypatch):
    from factories import png_bytes

    from pool.similarity import features

    monkeypatch.setattr(features, "_SAVE_BATCH", 2)
    good = sorted(store.put_png(png_bytes(h / 10, seed=i)) for i, h in enumerate(range(4)))
    broken = "f" * 64  # sorts after every real sha, so it is measured last
    path = store.png_path(broken)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a png")
    with pytest.raises(UnidentifiedImageError):
        features.load_features(store, [*good, broken], progress=False)
    rows = store.query("SELECT png_sha FROM image_features")
    assert sorted(r["png_sha"] for r in rows) == good


def test_a_scan_of_none_or_one_image_is_empty():
    for sigs in ([], random_signatures(1)):
        scan = pairs.scan_pairs(sigs, 4.0)
        assert scan.near.n_pairs == 0 and scan.stats.count == 0
        assert scan.stats.median is None and scan.stats.mean is None
        assert sum(scan.stats.histogram(50)) == 0
