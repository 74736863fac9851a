"""Flower / background separation for photo analysis.

A photo of one flower frames it near the middle; leaves, sky, soil and other blooms reach the
frame's edge. The separation works in OKLab on a small copy, in three steps:

1. seed: colour clusters that crowd the middle of the frame are flower, clusters that crowd the
   edge band are background (a cluster's share of the middle against its share of the edge);
2. refine, a few times: model the flower's colours and the background's separately (k-means
   each) and give every pixel to the nearer model, smoothed over its neighbours and nudged by
   a centre prior. The background model learns only from colours far from the flower's, so
   shaded petals left out of a guess do not teach it that petal colours are background;
3. shape: keep the central blob and what touches it (petals with thin bases stay), drop blooms
   at the frame's edge that join it by a narrow neck, and fill only small holes: the ground
   showing between petals stays background.

The result is a mask of flower pixels only, so the palette, the petal structure and the area
the flower covers describe the flower, never the foliage around it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from generators.colour import kmeans

NECK = 5  # px at analysis scale: blobs joined by a thinner neck are separate
FAR = 0.09  # weighted-OKLab distance beyond which a colour is clearly not the flower's
SMOOTH = 0.7  # px: how far a pixel's neighbours sway its label


@dataclass
class Segmentation:
    flower: np.ndarray  # bool (h, w): flower pixels
    separation: float  # 0-1: how distinct the flower's colours are from the background's
    fallback: bool  # True when nothing stood out and a central ellipse stands in


def _centre_prior(h: int, w: int, centre: tuple[float, float] = (0.5, 0.5)) -> np.ndarray:
    """1 at the given point, falling to 0 at the frame's corners (normalised by width/height)."""
    yy, xx = np.mgrid[0:h, 0:w]
    cy, cx = centre[1] * h, centre[0] * w
    d = np.hypot((yy - cy) / (h / 2), (xx - cx) / (w / 2)) / math.sqrt(2)
    return np.clip(1 - d, 0, 1)


def _edge_band(h: int, w: int) -> np.ndarray:
    band = np.zeros((h, w), bool)
    bw = max(2, min(h, w) // 12)
    band[:bw], band[-bw:], band[:, :bw], band[:, -bw:] = True, True, True, True
    return band


def _ellipse(h: int, w: int, rx: float = 0.35, ry: float = 0.35) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    return ((yy - h / 2) / (h * ry)) ** 2 + ((xx - w / 2) / (w * rx)) ** 2 <= 1


def _nearest(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    return np.sqrt(((points[:, None, :] - centres[None]) ** 2).sum(-1)).min(1)


def _weighted(lab: np.ndarray) -> np.ndarray:
    """OKLab with chroma counted double: hue tells flower from leaf better than lightness."""
    return lab * np.array([1.0, 2.0, 2.0])


def _seed(feat: np.ndarray, seed: int) -> np.ndarray:
    """Initial flower guess from colour clusters: crowding the middle vs crowding the edge."""
    h, w, _ = feat.shape
    flat = feat.reshape(-1, 3)
    centres, _ = kmeans(flat[:: max(1, len(flat) // 6000)], 8, seed=seed)
    labels = ((flat[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1).reshape(h, w)
    edge = _edge_band(h, w)
    middle = _ellipse(h, w, 0.22, 0.22)
    flower = np.zeros((h, w), bool)
    for j in range(len(centres)):
        members = labels == j
        in_middle = (members & middle).sum() / middle.sum()
        at_edge = (members & edge).sum() / edge.sum()
        if in_middle > 0.02 and in_middle > 1.3 * at_edge:
            flower |= members
    return flower


def _largest_central(mask: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """The biggest blob, weighted towards the middle."""
    blobs, n = ndimage.label(mask)
    if n <= 1:
        return mask
    weights = ndimage.sum(prior**2 + 0.05, blobs, index=range(1, n + 1))
    return blobs == (int(np.argmax(weights)) + 1)


def _touching(mask: np.ndarray, region: np.ndarray) -> np.ndarray:
    """The blobs of mask that overlap region."""
    blobs, _ = ndimage.label(mask)
    hit = np.unique(blobs[region & mask])
    return np.isin(blobs, hit[hit > 0])


def _cut_necks(mask: np.ndarray, prior: np.ndarray, radius: int) -> np.ndarray:
    """Drop blooms at the frame's edge that touch the flower only along a short seam.

    Another bloom of the same colour behind the flower reaches the edge of the frame and
    joins the flower by a neck narrower than 2*radius. Eroding the mask separates it; the
    flower's own petals, which also come apart, stay unless they reach the frame's edge.
    When the erosion leaves little of the mask, or leaves no one blob holding most of it, the
    flower is made of separate petals whose bases look like necks too: then nothing is cut.
    """
    if radius < 1:
        return mask
    core = ndimage.binary_erosion(mask, iterations=radius)
    if core.sum() < 0.3 * mask.sum():
        return mask
    blobs, n = ndimage.label(core)
    if n <= 1:
        return mask
    main = _largest_central(core, prior)
    if main.sum() < 0.6 * core.sum():
        return mask  # the erosion fell apart into petals, not one bloom and its neighbours
    at_edge = np.unique(blobs[_edge_band(*mask.shape) & core & ~main])
    drop = np.isin(blobs, at_edge[at_edge > 0])
    if not drop.any():
        return mask
    keep = ndimage.binary_dilation(core & ~drop, iterations=radius + 1) & mask
    return _touching(keep, main)


def _fill_small_holes(mask: np.ndarray, limit: float) -> np.ndarray:
    holes = ndimage.binary_fill_holes(mask) & ~mask
    blobs, n = ndimage.label(holes)
    if n == 0:
        return mask
    sizes = ndimage.sum(holes, blobs, index=range(1, n + 1))
    small = np.isin(blobs, 1 + np.flatnonzero(sizes <= limit * mask.size))
    return mask | small


def segment(lab: np.ndarray, seed: int = 0, rounds: int = 4) -> Segmentation:
    """Separate the flower from its background in an (h, w, 3) OKLab image."""
    h, w, _ = lab.shape
    feat = _weighted(lab)
    flat = feat.reshape(-1, 3)
    flower = _seed(feat, seed)
    if flower.sum() < 0.02 * h * w:
        return Segmentation(_ellipse(h, w), 0.0, True)
    prior = _centre_prior(h, w)
    separation = 0.0
    for _ in range(rounds):
        # the flower model learns from the guess away from the frame's edge, so a bloom or
        # stem of a similar colour in a corner does not teach it its colours
        inner = flower & (prior > 0.3)
        fg = flat[(inner if inner.sum() > 0.5 * flower.sum() else flower).reshape(-1)]
        fg_c, _ = kmeans(fg[:: max(1, len(fg) // 3000)], 6, seed=seed)
        d_fg = _nearest(flat, fg_c).reshape(h, w)
        # the background model learns only from colours unlike the flower's: shaded petals
        # outside the current guess must not teach it that petal colours are background
        bg = flat[(~flower & (d_fg > FAR)).reshape(-1)]
        if len(fg) < 20 or len(bg) < 20:
            break
        bg_c, _ = kmeans(bg[:: max(1, len(bg) // 3000)], 6, seed=seed)
        d_bg = _nearest(flat, bg_c).reshape(h, w)
        by_colour = (d_bg - d_fg) / (d_bg + d_fg + 1e-6)  # -1 background ... +1 flower
        score = ndimage.gaussian_filter(by_colour, SMOOTH) + 0.25 * (prior - 0.35)
        raw = score > 0
        # the main blob is chosen without specks and hair-thin bridges; the flower is then
        # every part of the raw mask that touches it, so petals with thin bases stay on
        main = _largest_central(
            ndimage.binary_opening(raw, iterations=1), _centre_prior(h, w, _centroid(flower))
        )
        new = _touching(raw, ndimage.binary_dilation(main, iterations=2))
        new = _cut_necks(new, prior, NECK)
        new = _fill_small_holes(new, 0.004)
        separation = float(np.mean(np.abs(by_colour)))
        if new.sum() < 0.01 * h * w or new.mean() > 0.95:
            break  # lost the flower, or took the whole frame: keep the last good guess
        if (new ^ flower).sum() < 0.002 * h * w:
            flower = new
            break
        flower = new
    if flower.sum() < 0.01 * h * w:
        return Segmentation(_ellipse(h, w), 0.0, True)
    return Segmentation(flower, round(min(1.0, separation), 3), False)


def _centroid(mask: np.ndarray) -> tuple[float, float]:
    ys, xs = np.nonzero(mask)
    h, w = mask.shape
    return (float(xs.mean() / w), float(ys.mean() / h)) if len(xs) else (0.5, 0.5)
