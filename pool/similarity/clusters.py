"""Near-duplicate clusters and perceptual-hash distances: pure functions on arrays.

The distance itself is distance.py's; this module groups images by it (complete linkage) and
keeps the dHash Hamming distances that the hash Vendi score and the threshold study use.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

HASH_BITS = 64


def hash_bits(hashes: Sequence[int]) -> np.ndarray:
    """(n, 64) float32 matrix of 0/1 bits."""
    arr = np.array([int(h) for h in hashes], dtype=np.uint64).reshape(-1, 1)
    shifts = np.arange(HASH_BITS, dtype=np.uint64).reshape(1, -1)
    return ((arr >> shifts) & np.uint64(1)).astype(np.float32)


def hamming_matrix(hashes: Sequence[int]) -> np.ndarray:
    """(n, n) int matrix of pairwise Hamming distances."""
    bits = hash_bits(hashes)
    flipped = 1.0 - bits
    return np.rint(bits @ flipped.T + flipped @ bits.T).astype(np.int32)


def near_duplicate_clusters(distances: np.ndarray, threshold: float) -> list[list[int]]:
    """Groups (size >= 2) of images all within `threshold` of each other, as index lists.

    Complete linkage, grown greedily: single linkage (connected components) lets a chain of
    small steps (a -> b -> c ...) join paintings that share nothing into one cluster. Here the
    seed is the image with the most near neighbours, its neighbours join nearest first, and an
    image joins only if it is within the threshold of every member already in. For a dense
    matrix (small sets); large ones go through pool.similarity.pairs and clusters_from_pairs.
    """
    return clusters_from_pairs(NearPairs.from_matrix(distances, threshold))


@dataclass(frozen=True)
class NearPairs:
    """The pairs of n images within `threshold` of each other, as neighbour lists (CSR):
    image i's near neighbours are `cols[starts[i]:starts[i + 1]]`, at `dists[...]`."""

    n: int
    threshold: float
    starts: np.ndarray  # int64[n + 1]
    cols: np.ndarray  # int64, each pair twice (i -> j and j -> i)
    dists: np.ndarray  # float64, beside cols

    @classmethod
    def build(
        cls, n: int, threshold: float, i: np.ndarray, j: np.ndarray, d: np.ndarray
    ) -> NearPairs:
        """From pairs (i[k], j[k]) at distance d[k], each pair once (either order)."""
        src = np.concatenate([i, j]).astype(np.int64)
        dst = np.concatenate([j, i]).astype(np.int64)
        both = np.concatenate([d, d]).astype(np.float64)
        order = np.lexsort((dst, src))
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=starts[1:])
        return cls(n, threshold, starts, dst[order], both[order])

    @classmethod
    def from_matrix(cls, distances: np.ndarray, threshold: float) -> NearPairs:
        i, j = np.nonzero(np.triu(distances <= threshold, k=1))
        return cls.build(distances.shape[0], threshold, i, j, distances[i, j])

    def neighbours(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        s, e = self.starts[i], self.starts[i + 1]
        return self.cols[s:e], self.dists[s:e]

    @property
    def n_pairs(self) -> int:
        return len(self.cols) // 2

    def subset(self, idx: Sequence[int] | np.ndarray) -> NearPairs:
        """The near pairs among images idx, renumbered 0..len(idx)-1 in idx's order."""
        idx = np.asarray(idx, dtype=np.int64)
        new = np.full(self.n, -1, dtype=np.int64)
        new[idx] = np.arange(len(idx))
        src = np.repeat(np.arange(self.n), np.diff(self.starts))
        a, b = new[src], new[self.cols]
        once = (a >= 0) & (b >= 0) & (a < b)
        return NearPairs.build(len(idx), self.threshold, a[once], b[once], self.dists[once])

    def nearest_within(self, group: Sequence[int]) -> dict[int, float]:
        """Each member of a cluster -> distance to its nearest other member."""
        members = np.asarray(group, dtype=np.int64)
        out = {}
        for i in group:
            cols, dists = self.neighbours(i)
            inside = np.isin(cols, members)
            out[i] = float(dists[inside].min()) if inside.any() else float("nan")
        return out


def clusters_from_pairs(near: NearPairs) -> list[list[int]]:
    """near_duplicate_clusters() on neighbour lists: the same greedy complete linkage, in
    time linear in the near pairs (no n x n matrix, no loop over all pairs).

    The seed is the unassigned image with the most unassigned near neighbours (lowest index
    on ties), kept in a heap whose stale entries (counts only fall) are refreshed when popped.
    A candidate joins when it is near every member so far: `hits` counts, per image, the
    members it is near, so the test is one comparison.
    """
    n = near.n
    counts = np.diff(near.starts).astype(np.int64)  # unassigned near neighbours
    unassigned = np.ones(n, bool)
    hits = np.zeros(n, dtype=np.int64)
    heap = [(-int(c), i) for i, c in enumerate(counts) if c > 0]
    heapq.heapify(heap)
    clusters = []
    while heap:
        neg, seed = heapq.heappop(heap)
        if not unassigned[seed] or counts[seed] == 0:
            continue
        if -neg != counts[seed]:  # stale: re-queue with the current count
            heapq.heappush(heap, (-int(counts[seed]), seed))
            continue
        cols, dists = near.neighbours(seed)
        open_ = unassigned[cols]
        order = np.lexsort((cols[open_], dists[open_]))  # nearest first, then lowest index
        members = [seed]
        touched = [cols]
        hits[cols] += 1
        for j in cols[open_][order].tolist():
            if hits[j] == len(members):
                members.append(j)
                mine = near.neighbours(j)[0]
                hits[mine] += 1
                touched.append(mine)
        for t in touched:
            hits[t] = 0
        unassigned[members] = False
        for k in members:  # their neighbours lose them as open neighbours
            np.subtract.at(counts, near.neighbours(k)[0], 1)
        clusters.append(sorted(members))
    return sorted(clusters, key=lambda g: (-len(g), g[0]))
