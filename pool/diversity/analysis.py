"""Diversity numbers for one selection (a version, a draft, or any {candidate id: tier}).

`analyse()` gathers cached features and returns a PoolMetrics: the `metrics` record
(pool/diversity/records.py; its to_dict() is what `refpool report --json` writes, and the
dataset card summarises it) plus what the HTML report needs to draw (thumbnails, entries,
the near pairs). Nothing here is n x n: pairs are scanned in tiles (pool/similarity/pairs.py)
and Vendi scores come from the small feature Gram matrix (metrics.vendi_of_rows).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from pool.catalog import PoolEntry, load_entries
from pool.diversity import metrics as m
from pool.diversity.records import (
    Counts,
    Coverage,
    Distance,
    Hue,
    Metrics,
    NearDuplicates,
    TierBy,
    TierHue,
    TierMetrics,
    Vendi,
)
from pool.similarity.clusters import NearPairs, clusters_from_pairs, hash_bits
from pool.similarity.features import ImageFeatures, load_features
from pool.similarity.pairs import PairScan, scan_pairs
from refpool.core.contracts import POOL_TIERS
from refpool.core.defaults import DUP_THRESHOLD
from refpool.core.store import Store

COVERAGE_BINS = 20  # 0.05 wide, over 0..1
DISTANCE_BINS = 50  # 2 wide, over the similarity distance's 0..100


@dataclass
class PoolMetrics:
    """The diversity of one selection: its numbers and what the report draws them from."""

    label: str
    ids: list[int]  # sorted candidate ids, the row order of `near`
    tiers: dict[int, str]
    entries: dict[int, PoolEntry]
    features: dict[int, ImageFeatures]  # by candidate id
    near: NearPairs  # pairs within the threshold (pool/similarity/distance.py, 0..100), by row
    metrics: Metrics


def _subset_metrics(
    idx: np.ndarray,
    hash_rows: np.ndarray,
    colour: np.ndarray,
    hue: np.ndarray,
    coverage: list[float | None],
) -> TierMetrics:
    pool_hue = hue[idx].sum(axis=0)
    return TierMetrics(
        n=int(len(idx)),
        vendi=Vendi(
            hash=round(m.vendi_of_rows(hash_rows[idx]), 3),
            colour=round(m.vendi_of_rows(m.cosine_rows(colour[idx])), 3),
        ),
        hue=TierHue(
            entropy_bits=round(m.entropy_bits(pool_hue), 3),
            coverage=round(m.hue_coverage(pool_hue), 3),
        ),
        coverage=m.coverage_stats([coverage[i] for i in idx]),
        palette=m.pool_palette(colour[idx], np.ones(len(idx)), k=8),
    )


def _count(values: Iterable[object]) -> dict[str, int]:
    """{value: count}, most frequent first."""
    counted = Counter(str(v) for v in values)
    return dict(sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])))


def _by_tier(
    labels: list[str], tiers: list[str], tier_names: list[str]
) -> dict[str, dict[str, int]]:
    """{label: {tier: count}}, labels most frequent first: one pass, not one per label."""
    pairs = Counter(zip(labels, tiers, strict=True))
    return {lab: {t: pairs[(lab, t)] for t in tier_names} for lab in _count(labels)}


def _distance(scan: PairScan, threshold: float) -> Distance:
    st = scan.stats
    return Distance(
        measure="pool/similarity/distance.py: colour, layout, texture; 0..100",
        threshold=threshold,
        histogram=st.histogram(DISTANCE_BINS),
        min=round(st.minimum, 2) if st.minimum is not None else None,
        median=round(st.median, 2) if st.median is not None else None,
        mean=round(st.mean, 3) if st.mean is not None else None,
        pairs_within_threshold=scan.near.n_pairs,
    )


def analyse(
    store: Store,
    tiers: dict[int, str],
    label: str = "selection",
    threshold: float = DUP_THRESHOLD,
    progress: bool = False,
    pairs: PairScan | None = None,
) -> PoolMetrics:
    """The metrics of `tiers`. `pairs`, when given, is scan_pairs over these ids in sorted
    order at this threshold (the report scans all candidates once and passes the selection's
    share); otherwise the pairs are scanned here."""
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
    scan = pairs or scan_pairs([feats[c].signature for c in ids], threshold)
    hashes = m.hash_rows(hash_bits([feats[c].phash for c in ids]))
    hue = np.array([feats[c].hue_hist for c in ids]).reshape(n, -1)
    colour = np.array([feats[c].colour_hist for c in ids]).reshape(n, -1)
    coverage = [c.coverage for c in candidates]
    clusters = clusters_from_pairs(scan.near)
    pool_hue = hue.sum(axis=0) if n else np.zeros(36)
    image_entropies = [m.entropy_bits(h) for h in hue]
    tier_list = [tiers[c] for c in ids]
    tier_names = sorted(set(tier_list), key=lambda t: (t != "love", t))
    photos = [entries[c].photo.file_name for c in ids]
    models = [c.generator for c in candidates]
    counts = Counts(
        tier=_count(tier_list),
        model=_count(models),
        round=_count(c.round for c in candidates),
        photo=_count(photos),
    )

    def share(c: dict[str, int]) -> dict[str, float]:
        return {k: round(v / n, 4) for k, v in c.items()} if n else {}

    hist_cov = np.histogram(
        [c for c in coverage if c is not None], bins=COVERAGE_BINS, range=(0, 1)
    )[0]
    clustered = sum(len(g) for g in clusters)
    per_tier: dict[str, TierMetrics] = {}
    for tier in POOL_TIERS:
        idx = np.array([i for i, t in enumerate(tier_list) if t == tier], dtype=int)
        if len(idx):
            per_tier[tier] = _subset_metrics(idx, hashes, colour, hue, coverage)
    metrics = Metrics(
        label=label,
        n=n,
        counts=counts,
        shares=Counts(*(share(getattr(counts, f)) for f in ("tier", "model", "round", "photo"))),
        tier_by=TierBy(
            photo=_by_tier(photos, tier_list, tier_names),
            model=_by_tier(models, tier_list, tier_names),
        ),
        distance=_distance(scan, threshold),
        near_duplicates=NearDuplicates(
            clusters=[[ids[i] for i in g] for g in clusters],
            n_clusters=len(clusters),
            n_images=clustered,
            share_of_images=round(clustered / n, 4) if n else None,
        ),
        hue=Hue(
            histogram=[round(float(x), 5) for x in (pool_hue / max(pool_hue.sum(), 1e-12))],
            entropy_bits=round(m.entropy_bits(pool_hue), 3),
            max_entropy_bits=round(float(np.log2(len(pool_hue))), 3),
            coverage=round(m.hue_coverage(pool_hue), 3),
            mean_image_entropy_bits=round(float(np.mean(image_entropies)), 3) if n else None,
            saturated_share=round(float(hue.sum(axis=1).mean()), 4) if n else None,
        ),
        palette=m.pool_palette(colour, np.ones(n), k=16),
        vendi=Vendi(
            hash=round(m.vendi_of_rows(hashes), 3) if n else 0.0,
            colour=round(m.vendi_of_rows(m.cosine_rows(colour)), 3) if n else 0.0,
        ),
        coverage=Coverage(
            stats=m.coverage_stats(coverage),
            histogram=hist_cov.tolist(),
            published_love=m.PUBLISHED_LOVE_COVERAGE,
        ),
        per_tier=per_tier,
    )
    return PoolMetrics(label, ids, {c: tiers[c] for c in ids}, entries, feats, scan.near, metrics)


HEADLINE: tuple[tuple[str, Callable[[Metrics], object]], ...] = (
    ("n", lambda mt: mt.n),
    ("Vendi (hash)", lambda mt: mt.vendi.hash),
    ("Vendi (colour)", lambda mt: mt.vendi.colour),
    ("hue entropy (bits)", lambda mt: mt.hue.entropy_bits),
    ("hue coverage", lambda mt: mt.hue.coverage),
    ("median distance", lambda mt: mt.distance.median),
    ("near-duplicate clusters", lambda mt: mt.near_duplicates.n_clusters),
    ("median paint coverage", lambda mt: mt.coverage.stats.median),
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


def headline(metrics: Metrics) -> list[tuple[str, object]]:
    """(name, value) of the numbers a summary shows first; None where a value is missing."""
    return [(name, read(metrics)) for name, read in HEADLINE]
