"""Near-duplicate clusters over every candidate with an image, not only a chosen pool.

`pool build` already leaves near-duplicates out, so clusters inside a built pool say little.
Over all candidates they show what the curators produced: which chains re-painted the same
picture, and which member of each cluster the pool kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pool.catalog import PoolEntry, load_entries
from pool.similarity import distance as similarity
from pool.similarity.clusters import near_duplicate_clusters
from pool.similarity.features import ImageFeatures, load_features, measurable
from refpool.core.store import Store


@dataclass
class CandidateClusters:
    threshold: float
    ids: list[int]  # every candidate measured (it has an image, on disk or cached)
    clusters: list[list[int]]  # candidate ids, largest cluster first
    nearest: dict[int, float]  # a clustered candidate -> distance to its nearest cluster mate
    entries: dict[int, PoolEntry]
    features: dict[int, ImageFeatures]

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


def candidate_clusters(store: Store, threshold: float, progress: bool = False) -> CandidateClusters:
    """Complete-linkage clusters (pool.similarity.near_duplicate_clusters) over all candidates."""
    entries = load_entries(store)
    shas = {
        cid: e.candidate.png_sha
        for cid, e in entries.items()
        if e.candidate.png_sha and measurable(store, e.candidate.png_sha)
    }
    ids = sorted(shas)
    by_sha = load_features(store, shas.values(), progress=progress)
    feats = {c: by_sha[shas[c]] for c in ids}
    d = similarity.distance_matrix([feats[c].signature for c in ids])
    groups = near_duplicate_clusters(d, threshold) if ids else []
    nearest: dict[int, float] = {}
    for g in groups:
        for i in g:
            mates = [j for j in g if j != i]
            nearest[ids[i]] = round(float(np.min(d[i, mates])), 1)
    clusters = [[ids[i] for i in g] for g in groups]
    return CandidateClusters(threshold, ids, clusters, nearest, entries, feats)
