"""Diversity metrics over a set of images: pure functions on arrays, no store access.

* Near-duplicate distance: pool/similarity/distance.py (colour, layout, texture; 0..100, 0 = the
  same picture). Perceptual-hash (dHash) Hamming distances remain for the hash Vendi score.
* Vendi score (Friedman & Dieng 2023): exp of the Shannon entropy of the eigenvalues of K/n,
  for a similarity kernel K with unit diagonal. It reads as "the effective number of distinct
  images": n identical images score 1, n mutually orthogonal ones score n.
  - hash kernel: bits as +-1 vectors, K = cosine = 1 - 2 d / 64 (positive semi-definite);
  - colour kernel: cosine similarity of the paint-colour histograms.
  Both kernels are linear (K = X X^T), so vendi_of_rows() takes the eigenvalues of the small
  X^T X instead: exact, and affordable at 10,000 images.
* Hue: a 36-bin histogram of saturated pixels; entropy in bits (max log2 36 = 5.17) and
  wheel coverage (share of bins holding at least 1% of the saturated pixels).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pool.diversity.records import CoverageStats
from pool.similarity.clusters import HASH_BITS
from pool.similarity.features import hex_colour

HUE_MIN_SHARE = 0.01
# The published pool's love tier: paint coverage quantiles (median, min, max), as published.
PUBLISHED_LOVE_COVERAGE = {"median": 0.222, "min": 0.043, "max": 0.656}


def _vendi_of_eigenvalues(eig: np.ndarray) -> float:
    eig = eig[eig > 1e-12]
    eig = eig / eig.sum()
    return float(math.exp(-(eig * np.log(eig)).sum()))


def vendi_score(kernel: np.ndarray) -> float:
    """Effective number of distinct items for a PSD similarity matrix with unit diagonal."""
    n = kernel.shape[0]
    if n == 0:
        return 0.0
    return _vendi_of_eigenvalues(np.linalg.eigvalsh(kernel.astype(np.float64) / n))


def vendi_of_rows(rows: np.ndarray) -> float:
    """vendi_score(rows @ rows.T) for unit-length rows (a linear kernel), exactly.

    X X^T (n x n) and X^T X (d x d) have the same nonzero eigenvalues, so for n > d the
    small Gram matrix is decomposed instead: O(n d^2) rather than O(n^3) time and n^2 memory
    (10,000 images: a 64 x 64 or 513 x 513 matrix instead of 10,000 x 10,000).
    """
    x = np.asarray(rows, dtype=np.float64)
    n = x.shape[0]
    if n == 0:
        return 0.0
    if n <= x.shape[1]:
        return vendi_score(x @ x.T)
    return _vendi_of_eigenvalues(np.linalg.eigvalsh(x.T @ x / n))


def hash_rows(bits: np.ndarray) -> np.ndarray:
    """(n, 64) 0/1 hash bits as unit rows whose dot products are hash_kernel's similarities:
    +-1 bits over sqrt(64), since <a, b> = (64 - 2 d) / 64."""
    return (2.0 * bits.astype(np.float64) - 1.0) / math.sqrt(HASH_BITS)


def cosine_rows(hists: np.ndarray) -> np.ndarray:
    """Histograms as unit rows (all-zero rows stay zero), whose dot products are cosine_kernel."""
    h = hists.astype(np.float64)
    norms = np.linalg.norm(h, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return h / norms


def hash_kernel(distances: np.ndarray) -> np.ndarray:
    return 1.0 - 2.0 * distances.astype(np.float64) / HASH_BITS


def cosine_kernel(hists: np.ndarray) -> np.ndarray:
    unit = cosine_rows(hists)
    return unit @ unit.T


def entropy_bits(hist: np.ndarray) -> float:
    total = float(hist.sum())
    if total <= 0:
        return 0.0
    p = hist[hist > 0] / total
    return float(-(p * np.log2(p)).sum())


def hue_coverage(hist: np.ndarray, min_share: float = HUE_MIN_SHARE) -> float:
    """Share of hue bins holding at least `min_share` of the saturated pixels."""
    total = float(hist.sum())
    if total <= 0:
        return 0.0
    return float(((hist / total) >= min_share).sum() / len(hist))


def distance_histogram(distances: np.ndarray, top: float = 100, bins: int = 50) -> list[int]:
    """Counts of pairwise distances in `bins` equal bins over 0..top, each pair once."""
    n = distances.shape[0]
    if n < 2:
        return [0] * bins
    upper = distances[np.triu_indices(n, k=1)]
    return np.histogram(np.clip(upper, 0, top), bins=bins, range=(0, top))[0].tolist()


def coverage_stats(values: Sequence[float | None]) -> CoverageStats:
    """Quantiles of paint coverage, and the share inside the published love tier's range."""
    v = np.array([x for x in values if x is not None], dtype=np.float64)
    if len(v) == 0:
        return CoverageStats(n=0)
    lo, hi = PUBLISHED_LOVE_COVERAGE["min"], PUBLISHED_LOVE_COVERAGE["max"]
    return CoverageStats(
        n=int(len(v)),
        median=round(float(np.median(v)), 4),
        min=round(float(v.min()), 4),
        max=round(float(v.max()), 4),
        p10=round(float(np.quantile(v, 0.1)), 4),
        p90=round(float(np.quantile(v, 0.9)), 4),
        in_published_range=round(float(((v >= lo) & (v <= hi)).mean()), 4),
    )


def pool_palette(
    colour_hists: np.ndarray, weights: np.ndarray, levels: int = 8, k: int = 16
) -> list[tuple[str, float]]:
    """The k most used paint colours across the pool (bin centres), with their share."""
    if len(colour_hists) == 0:
        return []
    agg = (colour_hists[:, : levels**3] * weights.reshape(-1, 1)).sum(axis=0)
    total = float(agg.sum())
    if total <= 0:
        return []
    out = []
    step = 256 // levels
    for idx in np.argsort(agg)[::-1][:k]:
        if agg[idx] <= 0:
            break
        r, g, b = idx // (levels * levels), (idx // levels) % levels, idx % levels
        centre = tuple(int(c * step + step // 2) for c in (r, g, b))
        out.append((hex_colour(centre), round(float(agg[idx] / total), 4)))
    return out
