"""Colour helpers shared by the photo analysis, the painter and the critics: sRGB <-> OKLab,
hex strings, k-means and plain-English colour names."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


# -- colour ---------------------------------------------------------------------------------
def srgb_to_oklab(rgb: np.ndarray) -> np.ndarray:
    """(..., 3) uint8 or 0-1 floats in sRGB -> (..., 3) OKLab (Björn Ottosson's published matrices)."""
    c = np.asarray(rgb, dtype=np.float64)
    if c.max(initial=0) > 1.0:
        c = c / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m1 = np.array(
        [
            [0.4122214708, 0.5363325363, 0.0514459929],
            [0.2119034982, 0.6806995451, 0.1073969566],
            [0.0883024619, 0.2817188376, 0.6299787005],
        ]
    )
    m2 = np.array(
        [
            [0.2104542553, 0.7936177850, -0.0040720468],
            [1.9779984951, -2.4285922050, 0.4505937099],
            [0.0259040371, 0.7827717662, -0.8086757660],
        ]
    )
    lms = np.cbrt(lin @ m1.T)
    return lms @ m2.T


def oklab_to_srgb(lab: np.ndarray) -> np.ndarray:
    """(..., 3) OKLab -> (..., 3) sRGB uint8 (clipped to gamut)."""
    m2_inv = np.array(
        [
            [1.0, 0.3963377774, 0.2158037573],
            [1.0, -0.1055613458, -0.0638541728],
            [1.0, -0.0894841775, -1.2914855480],
        ]
    )
    m1_inv = np.array(
        [
            [4.0767416621, -3.3077115913, 0.2309699292],
            [-1.2684380046, 2.6097574011, -0.3413193965],
            [-0.0041960863, -0.7034186147, 1.7076147010],
        ]
    )
    lms = (np.asarray(lab, dtype=np.float64) @ m2_inv.T) ** 3
    lin = np.clip(lms @ m1_inv.T, 0.0, 1.0)
    c = np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055)
    return np.clip(np.round(c * 255), 0, 255).astype(np.uint8)


def to_hex(rgb: Iterable[int] | np.ndarray) -> str:
    r, g, b = (int(v) for v in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


def hex_to_oklab(colour: str) -> np.ndarray:
    h = colour.lstrip("#")
    return srgb_to_oklab(np.array([int(h[i : i + 2], 16) for i in (0, 2, 4)], dtype=np.uint8))


def kmeans(
    points: np.ndarray, k: int, seed: int = 0, iters: int = 20
) -> tuple[np.ndarray, np.ndarray]:
    """Plain k-means with k-means++ seeding; returns (centres, labels)."""
    rng = np.random.default_rng(seed)
    n = len(points)
    k = max(1, min(k, n))
    picked = [points[rng.integers(n)]]
    d2 = ((points - picked[0]) ** 2).sum(-1)
    for _ in range(1, k):
        total = d2.sum()
        idx = rng.choice(n, p=d2 / total) if total > 0 else rng.integers(n)
        picked.append(points[idx])
        d2 = np.minimum(d2, ((points - points[idx]) ** 2).sum(-1))
    centres = np.array(picked)
    labels = np.zeros(n, dtype=int)
    for _ in range(iters):
        # |p - c|^2 = |p|^2 - 2 p.c + |c|^2, and |p|^2 does not change which c is nearest
        labels = ((centres**2).sum(1)[None] - 2 * points @ centres.T).argmin(1)
        counts = np.bincount(labels, minlength=k)
        sums = np.stack(
            [
                np.bincount(labels, weights=points[:, d], minlength=k)
                for d in range(points.shape[1])
            ],
            axis=1,
        )
        new = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], centres)
        if np.allclose(new, centres, atol=1e-5):
            break
        centres = new
    return centres, labels


HUE_NAMES = [  # OKLab hue angle (degrees) -> name, checked in order of the upper bound
    (15, "pink"), (45, "red"), (75, "orange"), (115, "yellow"), (165, "green"),
    (230, "teal"), (290, "blue"), (330, "purple"), (360, "pink"),
]  # fmt: skip


def colour_name(lab: np.ndarray) -> str:
    lightness, a, b = (float(v) for v in lab)
    chroma = math.hypot(a, b)
    if chroma < 0.035:
        if lightness > 0.8:
            return "white"
        return "black" if lightness < 0.3 else "pale grey" if lightness > 0.65 else "grey"
    hue = math.degrees(math.atan2(b, a)) % 360
    name = next(n for bound, n in HUE_NAMES if hue < bound)
    if lightness > 0.82 and name in ("red", "purple", "pink"):
        return "pale pink"
    if lightness > 0.65 and chroma < 0.09 and name in ("red", "purple", "pink"):
        return "pink"  # a light, soft red reads as pink (a rose's petals, not a tomato)
    if lightness < 0.45:
        return f"deep {name}"
    return name
