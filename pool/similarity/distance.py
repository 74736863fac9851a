"""How alike two paintings look to a curator: colour, layout and texture, as one distance.

A 64-bit dHash of a watercolour is mostly the pale paper and a centred blob, so a pink rose
and a yellow hibiscus hash alike while two seeds of one program may not. The signature here
measures what a curator looks at:

* colour: where the paint lies in OKLab (lightness x the a/b plane), as shares of the paint,
  smoothed so that a slightly other shade counts as near. Paper is left out (the gate's
  paint rule), so the paper tint of a plan does not count as a colour of the painting.
* layout: a LAYOUT_SIDE x LAYOUT_SIDE OKLab thumbnail of the whole picture: where which
  colour sits.
* texture: how the lightness changes within the paint: a histogram of gradient strengths
  and one of edge directions (soft washes vs. crisp petals, radial vs. striped strokes).

`distance()` combines the three into 0..100 (0 = the same picture). The weights and the
threshold come from `python -m pool.similarity.threshold`, which renders real chains and reports how
well each distance separates duplicates from distinct paintings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image
from scipy import ndimage

from generators.colour import srgb_to_oklab
from renderer.gate import paint_mask

SIDE = 128  # analysis size: enough for texture, cheap (a 600 px render is ~4.7x reduced)
LAYOUT_SIDE = 12
L_BINS, AB_BINS = 5, 12
L_RANGE, AB_RANGE = (0.25, 1.0), 0.3  # OKLab L and |a|, |b| spans of paint on paper
MAG_BINS, DIR_BINS = 8, 8
COLOUR_SIZE = L_BINS * AB_BINS * AB_BINS + 1  # +1: "no paint at all"
LAYOUT_SIZE = LAYOUT_SIDE * LAYOUT_SIDE * 3
TEXTURE_SIZE = MAG_BINS + DIR_BINS
SIZE = COLOUR_SIZE + LAYOUT_SIZE + TEXTURE_SIZE
# A mean OKLab difference per layout cell at which two layouts count as wholly different
# (paper to a mid-tone petal is ~0.25).
LAYOUT_FULL = 0.12
# Weights of colour, layout, texture in distance(); set from the calibration (pool/similarity/threshold.py)
WEIGHTS = (0.5, 0.35, 0.15)
COMPONENTS = ("colour", "layout", "texture")


@dataclass(frozen=True)
class Signature:
    colour: np.ndarray  # float32[COLOUR_SIZE]: share of paint per OKLab bin (smoothed)
    layout: np.ndarray  # float32[LAYOUT_SIDE, LAYOUT_SIDE, 3]: OKLab thumbnail
    texture: np.ndarray  # float32[TEXTURE_SIZE]: gradient strengths, then directions

    def to_bytes(self) -> bytes:
        parts = (self.colour.ravel(), self.layout.ravel(), self.texture.ravel())
        return np.concatenate(parts).astype(np.float32).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> Signature:
        flat = np.frombuffer(data, dtype=np.float32)
        if flat.size != SIZE:
            raise ValueError(f"a similarity signature has {SIZE} values, this one {flat.size}")
        colour = flat[:COLOUR_SIZE]
        layout = flat[COLOUR_SIZE : COLOUR_SIZE + LAYOUT_SIZE].reshape(LAYOUT_SIDE, LAYOUT_SIDE, 3)
        return cls(colour, layout, flat[COLOUR_SIZE + LAYOUT_SIZE :])


def _colour_hist(lab: np.ndarray, paint: np.ndarray) -> np.ndarray:
    out = np.zeros(COLOUR_SIZE, dtype=np.float32)
    pts = lab[paint]
    if len(pts) == 0:
        out[-1] = 1.0  # a blank image is its own colour class
        return out
    li = np.clip(
        ((pts[:, 0] - L_RANGE[0]) / (L_RANGE[1] - L_RANGE[0]) * L_BINS).astype(int), 0, L_BINS - 1
    )
    ab = np.clip(((pts[:, 1:] + AB_RANGE) / (2 * AB_RANGE) * AB_BINS).astype(int), 0, AB_BINS - 1)
    flat = (li * AB_BINS + ab[:, 0]) * AB_BINS + ab[:, 1]  # bincount: np.add.at is ~10x slower
    hist = np.bincount(flat, minlength=L_BINS * AB_BINS * AB_BINS).astype(np.float64)
    hist = hist.reshape(L_BINS, AB_BINS, AB_BINS)
    # Smooth over neighbouring bins: a shade one bin over is nearly the same colour.
    hist = ndimage.gaussian_filter(hist, sigma=(0.6, 0.8, 0.8), mode="constant")
    out[:-1] = (hist / hist.sum()).ravel()
    return out


def _texture(lightness: np.ndarray, paint: np.ndarray) -> np.ndarray:
    gy, gx = np.gradient(lightness)
    mag = np.hypot(gx, gy)[paint]
    ang = np.arctan2(gy, gx)[paint] % np.pi  # an edge's direction, not its sign
    out = np.zeros(TEXTURE_SIZE, dtype=np.float32)
    out[MAG_BINS:] = 1.0 / DIR_BINS  # no edges: no direction stands out
    if len(mag) == 0:
        out[0] = 1.0  # no paint: no change of lightness anywhere
        return out
    # Log-spaced strengths from barely-there grain (0.001/px) to hard edges (0.1/px).
    edges = np.concatenate(([0.0], np.geomspace(0.001, 0.1, MAG_BINS - 1), [np.inf]))
    out[:MAG_BINS] = np.histogram(mag, bins=edges)[0] / len(mag)
    strong = mag > 0.004
    if strong.any():
        d = np.histogram(ang[strong], bins=DIR_BINS, range=(0, np.pi), weights=mag[strong])[0]
        out[MAG_BINS:] = d / d.sum()
    return out


def signature(img: Image.Image) -> Signature:
    """The signature of an RGB image (flatten any alpha first)."""
    small = img.convert("RGB").resize((SIDE, SIDE), Image.Resampling.BOX)
    rgb = np.asarray(small, dtype=np.uint8)
    lab = srgb_to_oklab(rgb)
    paint = paint_mask(rgb)[0]
    cells = small.resize((LAYOUT_SIDE, LAYOUT_SIDE), Image.Resampling.BOX)
    layout = srgb_to_oklab(np.asarray(cells, dtype=np.uint8)).astype(np.float32)
    return Signature(_colour_hist(lab, paint), layout, _texture(lab[..., 0], paint))


def _stack(sigs: Sequence[Signature]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each component as rows, ready for matrix products: sqrt of the histograms (Hellinger),
    the layout flattened."""
    n = len(sigs)
    colour = np.array([s.colour for s in sigs], dtype=np.float64).reshape(n, COLOUR_SIZE)
    layout = np.array([s.layout for s in sigs], dtype=np.float64).reshape(n, LAYOUT_SIZE)
    texture = np.array([s.texture for s in sigs], dtype=np.float64).reshape(n, TEXTURE_SIZE)
    return np.sqrt(np.maximum(colour, 0)), layout, np.sqrt(np.maximum(texture, 0))


def _hellinger(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hellinger distances (0..1) between rows of sqrt-histograms (each summing to 1)."""
    return np.sqrt(np.clip(1.0 - a @ b.T, 0.0, 1.0))


def _between(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> dict[str, np.ndarray]:
    """(len a, len b) distances per component, each in 0..1. All matrix products: a report
    over every candidate compares thousands of images with each other."""
    sq = (a[1] ** 2).sum(axis=1)[:, None] + (b[1] ** 2).sum(axis=1)[None, :] - 2 * a[1] @ b[1].T
    cells = LAYOUT_SIDE * LAYOUT_SIDE
    rms = np.sqrt(np.maximum(sq, 0.0) / cells)  # root-mean-square OKLab difference per cell
    # texture: strengths and directions are two histograms, each summing to 1 (or all 0)
    mag = _hellinger(a[2][:, :MAG_BINS], b[2][:, :MAG_BINS])
    dirs = _hellinger(a[2][:, MAG_BINS:], b[2][:, MAG_BINS:])
    return {
        "colour": _hellinger(a[0], b[0]),
        "layout": np.clip(rms / LAYOUT_FULL, 0.0, 1.0),
        "texture": (mag + dirs) / 2,
    }


def component_distances(sigs: Sequence[Signature]) -> dict[str, np.ndarray]:
    """(n, n) distances per component, each in 0..1."""
    stacked = _stack(sigs)
    return _between(stacked, stacked)


def combine(parts: dict[str, np.ndarray], weights: Sequence[float] = WEIGHTS) -> np.ndarray:
    """Weighted sum of component distances, on 0..100."""
    wc, wl, wt = weights
    total = wc + wl + wt
    return 100.0 * (wc * parts["colour"] + wl * parts["layout"] + wt * parts["texture"]) / total


def distance_matrix(sigs: Sequence[Signature], weights: Sequence[float] = WEIGHTS) -> np.ndarray:
    """(n, n) float distances on 0..100; 0 on the diagonal."""
    if not sigs:
        return np.zeros((0, 0))
    d = combine(component_distances(sigs), weights)
    np.fill_diagonal(d, 0.0)
    return d


def distances_to(
    sig: Signature, others: Sequence[Signature], weights: Sequence[float] = WEIGHTS
) -> np.ndarray:
    """Distances (0..100) from one signature to each of `others`."""
    if not others:
        return np.zeros(0)
    return combine(_between(_stack([sig]), _stack(others)), weights)[0]


def distance(a: Signature, b: Signature) -> float:
    return float(distances_to(a, [b])[0])
