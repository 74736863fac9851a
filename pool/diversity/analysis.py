"""Diversity numbers for one selection (a version, a draft, or any {candidate id: tier}).

`analyse()` gathers cached features and returns a PoolMetrics: a JSON-ready `metrics` dict
(what `refpool report --json` writes and the dataset card summarises) plus what the HTML
report needs to draw (thumbnails, entries, the distance matrix).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pool.catalog import PoolEntry, load_entries
from pool.diversity import metrics as m
from pool.similarity import distance as similarity
from pool.similarity.clusters import hamming_matrix, near_duplicate_clusters
from pool.similarity.features import ImageFeatures, load_features
from refpool.core.defaults import DUP_THRESHOLD
from refpool.core.store import Store

COVERAGE_BINS = 20  # 0.05 wide, over 0..1
DISTANCE_BINS = 50  # 2 wide, over the similarity distance's 0..100


@dataclass
class PoolMetrics:
    """The diversity of one selection: its numbers and what the report draws them from."""

    label: str
    ids: list[int]  # sorted candidate ids, the row order of `distances`
    tiers: dict[int, str]
    entries: dict[int, PoolEntry]
    features: dict[int, ImageFeatures]  # by candidate id
    distances: np.ndarray  # pool/similarity/distance.py distances, 0..100
    metrics: dict[str, Any]


def _subset_metrics(
    idx: np.ndarray,
    hd: np.ndarray,
    colour: np.ndarray,
    hue: np.ndarray,
    coverage: list[float | None],
) -> dict[str, Any]:
    sub_d = hd[np.ix_(idx, idx)]
    pool_hue = hue[idx].sum(axis=0)
    return {
        "n": int(len(idx)),
        "vendi": {
            "hash": round(m.vendi_score(m.hash_kernel(sub_d)), 3),
            "colour": round(m.vendi_score(m.cosine_kernel(colour[idx])), 3),
        },
        "hue": {
            "entropy_bits": round(m.entropy_bits(pool_hue), 3),
            "coverage": round(m.hue_coverage(pool_hue), 3),
        },
        "coverage": m.coverage_stats([coverage[i] for i in idx]),
        "palette": m.pool_palette(colour[idx], np.ones(len(idx)), k=8),
    }


def analyse(
    store: Store,
    tiers: dict[int, str],
    label: str = "selection",
    threshold: float = DUP_THRESHOLD,
    progress: bool = False,
) -> PoolMetrics:
    ids = sorted(int(c) for c in tiers)
    entries = load_entries(store, ids)
    unknown = [c for c in ids if c not in entries]
    if unknown:
        raise LookupError(
            f"{len(unknown)} candidate(s) of {label} are not in the store: {unknown[:5]}"
        )
    shas = {c: entries[c].candidate.png_sha for c in ids}
    no_png = [c for c, sha in shas.items() if not sha]
    if no_png:
        raise ValueError(f"candidates without an image cannot be analysed: {no_png[:5]}")
    by_sha = load_features(store, [sha for sha in shas.values() if sha], progress=progress)
    feats = {c: by_sha[sha] for c, sha in shas.items() if sha}
    candidates = [entries[c].candidate for c in ids]

    n = len(ids)
    d = similarity.distance_matrix([feats[c].signature for c in ids])
    hd = hamming_matrix([feats[c].phash for c in ids]) if n else np.zeros((0, 0), np.int32)
    hue = np.array([feats[c].hue_hist for c in ids]).reshape(n, -1)
    colour = np.array([feats[c].colour_hist for c in ids]).reshape(n, -1)
    coverage = [c.coverage for c in candidates]
    upper = d[np.triu_indices(n, k=1)] if n > 1 else np.zeros(0)
    clusters = near_duplicate_clusters(d, threshold) if n else []
    pool_hue = hue.sum(axis=0) if n else np.zeros(36)
    image_entropies = [m.entropy_bits(h) for h in hue]

    def count(values: Iterable[object]) -> dict[str, int]:
        return {
            str(k): v
            for k, v in sorted(Counter(values).items(), key=lambda kv: (-kv[1], str(kv[0])))
        }

    def share(counts: dict[str, int]) -> dict[str, float]:
        return {k: round(v / n, 4) for k, v in counts.items()} if n else {}

    def by_tier(labels: dict[int, str]) -> dict[str, dict[str, int]]:
        """{label: {tier: count}}, labels most frequent first."""
        table: dict[str, dict[str, int]] = {}
        for label in count(labels[c] for c in ids):
            table[label] = {
                t: sum(1 for c in ids if labels[c] == label and tiers[c] == t) for t in tier_names
            }
        return table

    tier_names = sorted({tiers[c] for c in ids}, key=lambda t: (t != "love", t))
    counts = {
        "tier": count(tiers[c] for c in ids),
        "model": count(c.generator for c in candidates),
        "round": count(c.round for c in candidates),
        "photo": count(entries[c].photo.file_name for c in ids),
    }
    hist_cov = np.histogram(
        [c for c in coverage if c is not None], bins=COVERAGE_BINS, range=(0, 1)
    )[0]
    per_tier: dict[str, Any] = {}
    metrics: dict[str, Any] = {
        "label": label,
        "n": n,
        "counts": counts,
        "shares": {k: share(v) for k, v in counts.items()},
        "tier_by": {
            "photo": by_tier({c: entries[c].photo.file_name for c in ids}),
            "model": by_tier({c: entries[c].candidate.generator for c in ids}),
        },
        "distance": {
            "measure": "pool/similarity/distance.py: colour, layout, texture; 0..100",
            "threshold": threshold,
            "histogram": m.distance_histogram(d, top=100, bins=DISTANCE_BINS),
            "min": round(float(upper.min()), 2) if len(upper) else None,
            "median": round(float(np.median(upper)), 2) if len(upper) else None,
            "mean": round(float(upper.mean()), 3) if len(upper) else None,
            "pairs_within_threshold": int((upper <= threshold).sum()),
        },
        "near_duplicates": {
            "clusters": [[ids[i] for i in g] for g in clusters],
            "n_clusters": len(clusters),
            "n_images": sum(len(g) for g in clusters),
            "share_of_images": round(sum(len(g) for g in clusters) / n, 4) if n else None,
        },
        "hue": {
            "histogram": [round(float(x), 5) for x in (pool_hue / max(pool_hue.sum(), 1e-12))],
            "entropy_bits": round(m.entropy_bits(pool_hue), 3),
            "max_entropy_bits": round(float(np.log2(len(pool_hue))), 3),
            "coverage": round(m.hue_coverage(pool_hue), 3),
            "mean_image_entropy_bits": round(float(np.mean(image_entropies)), 3) if n else None,
            "saturated_share": round(float(hue.sum(axis=1).mean()), 4) if n else None,
        },
        "palette": m.pool_palette(colour, np.ones(n), k=16),
        "vendi": {
            "hash": round(m.vendi_score(m.hash_kernel(hd)), 3) if n else 0.0,
            "colour": round(m.vendi_score(m.cosine_kernel(colour)), 3) if n else 0.0,
        },
        "coverage": {
            **m.coverage_stats(coverage),
            "histogram": hist_cov.tolist(),
            "published_love": m.PUBLISHED_LOVE_COVERAGE,
        },
        "per_tier": per_tier,
    }
    for tier in ("love", "okay"):
        idx = np.array([i for i, c in enumerate(ids) if tiers[c] == tier], dtype=int)
        if len(idx):
            per_tier[tier] = _subset_metrics(idx, hd, colour, hue, coverage)
    return PoolMetrics(label, ids, {c: tiers[c] for c in ids}, entries, feats, d, metrics)


HEADLINE = (
    ("n", ("n",)),
    ("Vendi (hash)", ("vendi", "hash")),
    ("Vendi (colour)", ("vendi", "colour")),
    ("hue entropy (bits)", ("hue", "entropy_bits")),
    ("hue coverage", ("hue", "coverage")),
    ("median distance", ("distance", "median")),
    ("near-duplicate clusters", ("near_duplicates", "n_clusters")),
    ("median paint coverage", ("coverage", "median")),
)
# What each headline number means, shown beside it wherever it appears.
HEADLINE_NOTES = {
    "n": "images in the selection",
    "Vendi (hash)": "effective number of distinct images by layout (dHash similarity):"
    " 1 if all alike, n if all unrelated",
    "Vendi (colour)": "effective number of distinct images by paint colours (colour-histogram"
    " similarity): 1 if all share one palette, n if none share a colour",
    "hue entropy (bits)": "how evenly the saturated paint spreads over 36 hue bins;"
    " 0 = one hue, 5.17 = every hue equally",
    "hue coverage": "share of the 36 hue bins (10 degrees each) holding at least 1% of the"
    " saturated paint",
    "median distance": "median near-duplicate distance between two images (colour, layout,"
    " texture; 0 = same picture, 100 = nothing alike)",
    "near-duplicate clusters": "groups of images all within the near-duplicate threshold of"
    " each other (a pool made by pool build has none left)",
    "median paint coverage": "median share of the canvas covered by paint (the gate's rule);"
    " the published love tier's median is 0.222",
}


def headline(metrics: dict[str, Any]) -> list[tuple[str, object]]:
    """(name, value) of the numbers a summary shows first; None where a value is missing."""
    out: list[tuple[str, object]] = []
    for name, path in HEADLINE:
        value: Any = metrics
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        out.append((name, value))
    return out
