"""Near-duplicate clusters over every candidate with an image, not only a chosen pool.

`pool build` already leaves near-duplicates out, so clusters inside a built pool say little.
Over all candidates they show what the curators produced: which chains re-painted the same
picture, and which member of each cluster the pool kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pool.catalog import PoolEntry, load_entries
from pool.similarity.clusters import clusters_from_pairs
from pool.similarity.features import ImageFeatures, load_features, measurable
from pool.similarity.pairs import PairScan, scan_pairs
from refpool.core.store import Store


@dataclass
class CandidateClusters:
    threshold: float
    ids: list[int]  # every candidate measured (it has an image, on disk or cached)
    clusters: list[list[int]]  # candidate ids, largest cluster first
    nearest: dict[int, float]  # a clustered candidate -> distance to its nearest cluster mate
    entries: dict[int, PoolEntry]
    features: dict[int, ImageFeatures]
    scan: PairScan  # near pairs over `ids`; statistics over the pairs inside `selection`
    selection: frozenset[int]

    def pairs_of(self, selection: Iterable[int]) -> PairScan | None:
        """The scan restricted to `selection` (in sorted order), if every one was measured
        here and the statistics are over exactly it; else None."""
        chosen = sorted(selection)
        row = {c: i for i, c in enumerate(self.ids)}
        if set(chosen) != self.selection or any(c not in row for c in chosen):
            return None
        pos = np.array([row[c] for c in chosen], dtype=np.int64)
        return PairScan(self.scan.near.subset(pos), self.scan.stats)

    def to_dict(self, in_pool: set[int]) -> dict[str, Any]:
        clustered = sum(len(g) for g in self.clusters)
        n = len(self.ids)
        return {
            "threshold": self.threshold,
            "n_candidates": n,
            "n_clusters": len(self.clusters),
            "n_images": clustered,
            "share_of_candidates": round(clustered / n, 4) if n else None,
            "clusters": self.clusters,
            "in_pool": [sorted(c for c in g if c in in_pool) for g in self.clusters],
        }


def candidate_clusters(
    store: Store, threshold: float, progress: bool = False, selection: Iterable[int] = ()
) -> CandidateClusters:
    """Complete-linkage clusters (pool.similarity.clusters) over all candidates.

    One tiled scan of every pair (pool/similarity/pairs.py); its distance statistics are over
    the pairs inside `selection`, so a report reuses the scan for its selection (pairs_of).
    """
    entries = load_entries(store)
    shas = {
        cid: e.candidate.png_sha
        for cid, e in entries.items()
        if e.candidate.png_sha and measurable(store, e.candidate.png_sha)
    }
    ids = sorted(shas)
    by_sha = load_features(store, shas.values(), progress=progress)
    feats = {c: by_sha[shas[c]] for c in ids}
    chosen = set(selection)
    scan = scan_pairs(
        [feats[c].signature for c in ids], threshold, np.array([c in chosen for c in ids], bool)
    )
    groups = clusters_from_pairs(scan.near)
    nearest: dict[int, float] = {}
    for g in groups:
        for i, d in scan.near.nearest_within(g).items():
            nearest[ids[i]] = round(d, 1)
    clusters = [[ids[i] for i in g] for g in groups]
    return CandidateClusters(
        threshold, ids, clusters, nearest, entries, feats, scan, frozenset(chosen)
    )
