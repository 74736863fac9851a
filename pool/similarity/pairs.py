"""Every pairwise distance of a pool, in tiles: the near pairs and the distance statistics.

A report over 10,000 images compares 50 million pairs. A dense n x n float64 matrix of them
is 800 MB, so the pairs are measured tile by tile (float32, fused in-place arithmetic over
tiles that fit in the CPU cache, two threads) and only two things are kept: the sparse near
pairs (distance <= threshold) that clusters need, and histograms of all distances.

float32 loses precision where a Hellinger distance is near 0 (the square root of a small
difference of dot products), so every pair within MARGIN of the threshold is measured again
in float64, pair by pair: the near pairs, and their distances, are the float64 ones.
Statistics far from the threshold keep float32 values (error well under 0.01).
The median is read off a histogram of FINE bins per distance unit, interpolated within its
bin: within 1 / FINE of the exact median.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pool.similarity import distance as dist
from pool.similarity.clusters import NearPairs

TILE = 512  # rows and columns per tile: a float32 tile is 1 MB, so its passes stay in cache
MARGIN = 1.0  # distance units; float32 error is below 0.3 even at distance 0
FINE = 1000  # fine histogram bins per distance unit (0.001 wide), for the median
TOP = 100  # distances run over 0..100
EXACT_CHUNK = 4096  # pairs measured at a time in float64 (memory: chunk x signature size)
_WORKERS = max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class PairStats:
    """Distances between every pair (i < j) of a set of images, without keeping them."""

    count: int
    total: float
    minimum: float | None
    fine: np.ndarray  # int64[TOP * FINE + 1] counts; the last bin holds distance == TOP

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    @property
    def median(self) -> float | None:
        if not self.count:
            return None
        cum = np.cumsum(self.fine)

        def at(rank: int) -> float:  # the value of the rank-th smallest distance (0-based)
            k = int(np.searchsorted(cum, rank + 1))
            below = int(cum[k - 1]) if k else 0
            inside = int(self.fine[k])
            return (k + (rank - below + 0.5) / inside) / FINE  # spread evenly over the bin

        mid = self.count // 2
        return at(mid) if self.count % 2 else (at(mid - 1) + at(mid)) / 2

    def histogram(self, bins: int) -> list[int]:
        """Counts in `bins` equal bins over 0..TOP, the last bin closed (as np.histogram)."""
        coarse = self.fine[:-1].reshape(bins, -1).sum(axis=1)
        coarse[-1] += self.fine[-1]
        return [int(x) for x in coarse]


@dataclass(frozen=True)
class PairScan:
    near: NearPairs  # over all images scanned
    stats: PairStats  # over the pairs both of whose images are in the `stats_of` mask


def _prepared(sigs: Sequence[dist.Signature], dtype: type) -> list[np.ndarray]:
    """Rows ready for the fused tile arithmetic: colour, layout, magnitudes, directions, each
    pre-scaled so that a tile needs no further scaling."""
    colour, layout, texture = dist._stack(sigs)
    cells = dist.LAYOUT_SIDE * dist.LAYOUT_SIDE
    # Centred (distances do not change) to keep float32 cancellation small, then scaled so
    # that sqrt(|a - b|^2) is rms / LAYOUT_FULL directly.
    layout = (layout - layout.mean(axis=0)) / np.sqrt(cells * dist.LAYOUT_FULL**2)
    parts = [colour, layout, texture[:, : dist.MAG_BINS], texture[:, dist.MAG_BINS :]]
    return [np.ascontiguousarray(p, dtype=dtype) for p in parts]


def _weights() -> tuple[float, float, float]:
    wc, wl, wt = dist.WEIGHTS
    scale = 100.0 / (wc + wl + wt)
    return wc * scale, wl * scale, wt * scale / 2  # texture: mean of two Hellingers


def _tile(
    a: list[np.ndarray], b: list[np.ndarray], sq_a: np.ndarray, sq_b: np.ndarray
) -> np.ndarray:
    """Distances (0..100) between rows of a and b: distance.combine(distance._between(...)),
    fused and in place."""
    wc, wl, wt = _weights()
    out = a[0] @ b[0].T  # colour: Hellinger = sqrt(1 - <sqrt p, sqrt q>)
    np.subtract(1.0, out, out=out)
    np.maximum(out, 0.0, out=out)
    np.sqrt(out, out=out)
    out *= wc
    lay = a[1] @ (-2.0 * b[1]).T  # layout: |a - b|^2 = |a|^2 + |b|^2 - 2 a.b
    lay += sq_a[:, None]
    lay += sq_b[None, :]
    np.maximum(lay, 0.0, out=lay)
    np.sqrt(lay, out=lay)
    np.minimum(lay, 1.0, out=lay)
    lay *= wl
    out += lay
    for k in (2, 3):  # texture: strengths, then directions
        h = a[k] @ b[k].T
        np.subtract(1.0, h, out=h)
        np.maximum(h, 0.0, out=h)
        np.sqrt(h, out=h)
        h *= wt
        out += h
    return out


def exact_distances(rows: list[np.ndarray], i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """float64 distances of the pairs (i[k], j[k]), from float64 `_prepared` rows."""
    wc, wl, wt = _weights()
    out = np.empty(len(i), dtype=np.float64)
    for s in range(0, len(i), EXACT_CHUNK):
        a, b = i[s : s + EXACT_CHUNK], j[s : s + EXACT_CHUNK]
        c = np.sqrt(np.clip(1.0 - np.einsum("ij,ij->i", rows[0][a], rows[0][b]), 0.0, 1.0))
        lay = np.minimum(np.sqrt(((rows[1][a] - rows[1][b]) ** 2).sum(axis=1)), 1.0)
        t = sum(
            np.sqrt(np.clip(1.0 - np.einsum("ij,ij->i", rows[k][a], rows[k][b]), 0.0, 1.0))
            for k in (2, 3)
        )
        out[s : s + EXACT_CHUNK] = wc * c + wl * lay + wt * t
    return out


@functools.cache
def _blas_local_threads() -> Callable[[ctypes.c_int], object] | None:
    """numpy's OpenBLAS call that sets the BLAS thread count of the calling thread only."""
    libs = Path(np.__file__).parent.parent / "numpy.libs"
    for lib in sorted(libs.glob("libscipy_openblas*.so")):
        fn = getattr(ctypes.CDLL(str(lib)), "openblas_set_num_threads_local", None)
        if fn is not None:
            return fn
    return None


def _one_blas_thread() -> None:
    """Tile threads do single-threaded products: OpenBLAS's own threads on top of ours
    oversubscribe a 2-core machine (a 512 x 512 tile took 47 ms instead of 9 under load)."""
    fn = _blas_local_threads()
    if fn is not None:
        fn(ctypes.c_int(1))


def _tiles(n: int) -> Iterator[tuple[int, int]]:
    for i0 in range(0, n, TILE):
        for j0 in range(i0, n, TILE):
            yield i0, j0


def scan_pairs(
    sigs: Sequence[dist.Signature], threshold: float, stats_of: np.ndarray | None = None
) -> PairScan:
    """Near pairs (float64 distance <= threshold) over all `sigs`, and statistics of the
    distances between pairs of images inside the boolean mask `stats_of` (default: all)."""
    n = len(sigs)
    if n < 2:
        empty = np.zeros(0, np.int64)
        near0 = NearPairs.build(n, threshold, empty, empty, np.zeros(0))
        return PairScan(near0, PairStats(0, 0.0, None, np.zeros(TOP * FINE + 1, np.int64)))
    mask = np.ones(n, bool) if stats_of is None else np.asarray(stats_of, bool)
    rows32, rows64 = _prepared(sigs, np.float32), _prepared(sigs, np.float64)
    sq = (rows32[1].astype(np.float64) ** 2).sum(axis=1).astype(np.float32)
    cut = threshold + MARGIN

    def one(tile: tuple[int, int]) -> tuple[np.ndarray, ...]:
        i0, j0 = tile
        i1, j1 = min(i0 + TILE, n), min(j0 + TILE, n)
        d = _tile([r[i0:i1] for r in rows32], [r[j0:j1] for r in rows32], sq[i0:i1], sq[j0:j1])
        keep = mask[i0:i1, None] & mask[None, j0:j1]
        if i0 == j0:  # a diagonal tile: each pair once, never an image with itself
            keep &= np.triu(np.ones(d.shape, bool), k=1)
        close = d <= cut
        if i0 == j0:
            close &= np.triu(np.ones(d.shape, bool), k=1)
        ci, cj = np.nonzero(close)
        ci, cj = ci + i0, cj + j0
        exact = exact_distances(rows64, ci, cj)
        far = d[keep & ~close]
        both = keep[ci - i0, cj - j0]
        values = np.concatenate([far.astype(np.float64), exact[both]])
        np.clip(values, 0.0, TOP, out=values)
        fine = np.bincount((values * FINE).astype(np.int64), minlength=TOP * FINE + 1)
        near = exact <= threshold
        low = float(values.min()) if len(values) else np.inf
        summary = np.array([len(values), values.sum(), low])
        return ci[near], cj[near], exact[near], fine, summary

    fine = np.zeros(TOP * FINE + 1, dtype=np.int64)
    count, total, low = 0, 0.0, np.inf
    pi, pj, pd = [], [], []
    # numpy and BLAS release the GIL: one thread per core
    with ThreadPoolExecutor(max_workers=_WORKERS, initializer=_one_blas_thread) as pool:
        for ci, cj, cd, f, (k, s, m) in pool.map(one, _tiles(n)):
            pi.append(ci)
            pj.append(cj)
            pd.append(cd)
            fine += f[: len(fine)]
            count, total, low = count + int(k), total + float(s), min(low, float(m))
    near = NearPairs.build(
        n,
        threshold,
        np.concatenate(pi) if pi else np.zeros(0, np.int64),
        np.concatenate(pj) if pj else np.zeros(0, np.int64),
        np.concatenate(pd) if pd else np.zeros(0),
    )
    stats = PairStats(count, total, None if count == 0 else low, fine)
    return PairScan(near, stats)
