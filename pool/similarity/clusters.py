"""Near-duplicate clusters and perceptual-hash distances: pure functions on arrays.

The distance itself is distance.py's; this module groups images by it (complete linkage) and
keeps the dHash Hamming distances that the hash Vendi score and the threshold study use.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    image joins only if it is within the threshold of every member already in.
    """
    near = distances <= threshold
    np.fill_diagonal(near, False)
    unassigned = np.ones(distances.shape[0], bool)
    # near neighbours still unassigned, kept up to date as clusters form (not recounted: O(n^2))
    open_neighbours = near.sum(axis=1)
    clusters = []
    while True:
        counts = open_neighbours * unassigned
        seed = int(counts.argmax())
        if counts[seed] == 0:
            break
        members = [seed]
        candidates = np.nonzero(near[seed] & unassigned)[0]
        for j in sorted(candidates.tolist(), key=lambda j: (distances[seed, j], j)):
            if all(near[j, k] for k in members):
                members.append(j)
        if len(members) < 2:  # cannot happen (the seed has a near neighbour); guards the loop
            unassigned[seed] = False
            continue
        unassigned[members] = False
        open_neighbours = open_neighbours - near[:, members].sum(axis=1)
        clusters.append(sorted(members))
    return sorted(clusters, key=lambda g: (-len(g), g[0]))
