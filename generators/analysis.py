"""Photo analysis: the flower apart from its background, its palette, petals and composition.

Everything is measured on a small copy (ANALYSIS_SIDE px) with numpy: a fraction of a second.
The flower is separated from the background first (generators/segment.py); its palette, petal
structure and area come from the flower's own pixels, and the background is described on its
own. The result feeds the procedural generator, the heuristic critic and the text brief that
is sent to coders which cannot see images.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage

from generators.colour import (
    colour_name,
    hex_to_oklab,
    kmeans,
    oklab_to_srgb,
    srgb_to_oklab,
    to_hex,
)
from generators.segment import segment

__all__ = [
    "ANALYSIS_SIDE",
    "PhotoAnalysis",
    "Swatch",
    "analyse",
    "analyse_path",
    "brief",
    "colour_name",
    "hex_to_oklab",
    "kmeans",
    "load_rgb",
    "oklab_to_srgb",
    "srgb_to_oklab",
    "to_hex",
]

ANALYSIS_SIDE = 160


# -- the analysis record --------------------------------------------------------------------
@dataclass
class Swatch:
    hex: str
    weight: float  # share of the flower's pixels (of the background's, for background swatches)
    lab: list[float]
    name: str


@dataclass
class PhotoAnalysis:
    width: int
    height: int
    palette: list[Swatch]  # the flower's colours (flower pixels only), darkest first
    background: list[Swatch]  # colours of everything that is not the flower, darkest first
    centre_colour: str  # colour at the heart of the flower
    hues: list[str]  # the flower's hue names, most prominent first
    mask: np.ndarray = field(repr=False)  # bool, ANALYSIS_SIDE-scale, True = flower pixel
    extent: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)  # x0,y0,x1,y1 (0-1)
    centre: tuple[float, float] = (0.5, 0.5)  # flower centroid (0-1 of width, height)
    radius: float = 0.3  # equivalent radius of the flower's area / shorter side
    coverage: float = 0.0  # share of the frame that is flower (background excluded)
    petals: int = 5
    petal_confidence: float = 0.0  # 0-1: how clearly the mask shows that many petals
    profile: list[float] = field(default_factory=list, repr=False)  # radius by angle (36 bins)
    background_hues: list[str] = field(default_factory=list)  # most prominent first
    separated_petals: bool = False  # petals counted from the gaps between them
    cropped: bool = False  # the flower runs past the frame's edge
    separation: float = 0.0  # 0-1: how distinct the flower's colours are from the background's
    segmentation_fallback: bool = False  # nothing stood out: a central ellipse stood in

    def brief(self) -> str:
        return brief(self)


def load_rgb(path: Path | str, side: int = ANALYSIS_SIDE) -> np.ndarray:
    with Image.open(path) as img:
        rgb = img.convert("RGB")
    rgb.thumbnail((side, side), Image.Resampling.LANCZOS)
    return np.asarray(rgb, dtype=np.uint8)


@functools.lru_cache(maxsize=64)
def analyse_path(path: str) -> PhotoAnalysis:
    return analyse(load_rgb(path))


def analyse(rgb: np.ndarray) -> PhotoAnalysis:
    """Analyse an (h, w, 3) uint8 image (ideally ~ANALYSIS_SIDE px on the long side)."""
    h, w, _ = rgb.shape
    lab = srgb_to_oklab(rgb)
    seg = segment(lab)
    mask = seg.flower
    flower = lab[mask]
    ground = lab[~mask] if (~mask).sum() > 20 else lab.reshape(-1, 3)
    palette = _swatches(flower, 5)
    background = _swatches(ground, 3)
    ys, xs = np.nonzero(mask)
    cy, cx = ys.mean(), xs.mean()
    short = min(h, w)
    area = mask.sum()
    radius = math.sqrt(area / math.pi) / short
    core = _disc(h, w, cy, cx, max(2.0, radius * short * 0.18)) & mask
    centre_lab = lab[core].mean(0) if core.any() else flower.mean(0)
    profile = _radial_profile(mask, cy, cx)
    petals, confidence = _petal_count(profile)
    gaps = _petals_between_gaps(mask, cy, cx, profile)
    if gaps:
        petals, confidence = gaps, max(confidence, 0.6)
    edge = np.concatenate([mask[0], mask[-1], mask[:, 0], mask[:, -1]])
    return PhotoAnalysis(
        width=w,
        height=h,
        palette=palette,
        background=background,
        centre_colour=to_hex(oklab_to_srgb(centre_lab)),
        hues=_hues(palette),
        mask=mask,
        extent=(xs.min() / w, ys.min() / h, (xs.max() + 1) / w, (ys.max() + 1) / h),
        centre=(float(cx / w), float(cy / h)),
        radius=float(radius),
        coverage=float(area / mask.size),
        petals=petals,
        petal_confidence=confidence,
        profile=[round(float(v), 4) for v in _bin(profile, 36)],
        background_hues=_hues(background, 0.15),
        separated_petals=bool(gaps),
        cropped=bool(edge.mean() > 0.02),
        separation=seg.separation,
        segmentation_fallback=seg.fallback,
    )


def _hues(swatches: list[Swatch], least: float = 0.0) -> list[str]:
    hues: list[str] = []
    for swatch in sorted(swatches, key=lambda s: -s.weight):
        if swatch.weight < least:
            continue
        base = swatch.name.removeprefix("deep ").removeprefix("pale ")
        if base not in hues:
            hues.append(base)
    return hues[:3]


def _swatches(points: np.ndarray, k: int) -> list[Swatch]:
    sample = points[:: max(1, len(points) // 4000)]
    centres, labels = kmeans(sample, k)
    counts = np.bincount(labels, minlength=len(centres)) / len(labels)
    out = [
        Swatch(
            hex=to_hex(oklab_to_srgb(c)),
            weight=round(float(n), 3),
            lab=[round(float(v), 4) for v in c],
            name=colour_name(c),
        )
        for c, n in zip(centres, counts, strict=True)
        if n > 0.01
    ]
    return sorted(out, key=lambda s: s.lab[0])


def _disc(h: int, w: int, cy: float, cx: float, r: float) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    return (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r


def _radial_profile(mask: np.ndarray, cy: float, cx: float, bins: int = 180) -> np.ndarray:
    """Distance from the centroid to the furthest flower pixel, per angle (in pixels)."""
    ys, xs = np.nonzero(mask)
    angles = (np.arctan2(ys - cy, xs - cx) % (2 * np.pi)) / (2 * np.pi) * bins
    dist = np.hypot(ys - cy, xs - cx)
    profile = np.zeros(bins)
    np.maximum.at(profile, angles.astype(int) % bins, dist)
    # empty bins (thin masks) borrow from their neighbours
    for _ in range(3):
        empty = profile == 0
        if not empty.any():
            break
        profile[empty] = np.maximum(np.roll(profile, 1), np.roll(profile, -1))[empty]
    return profile


def _petal_count(profile: np.ndarray) -> tuple[int, float]:
    """Dominant angular frequency between 4 and 14 of the radius profile; 5 when unclear."""
    centred = profile - profile.mean()
    spectrum = np.abs(np.fft.rfft(centred))
    if profile.mean() <= 0 or spectrum[1:].sum() == 0:
        return 5, 0.0
    band = range(4, 15)
    best = max(band, key=lambda k: spectrum[k])
    confidence = float(spectrum[best] / (spectrum[1:40].sum() + 1e-9))
    amplitude = 2 * spectrum[best] / len(profile) / profile.mean()  # petal tips vs notches
    if confidence < 0.08 or amplitude < 0.04:
        return 5, round(confidence, 3)
    return int(best), round(min(1.0, confidence * 3), 3)


def _bin(profile: np.ndarray, n: int) -> np.ndarray:
    norm = profile / (profile.max() or 1)
    return norm.reshape(n, -1).mean(1)


def _petals_between_gaps(
    mask: np.ndarray, cy: float, cx: float, profile: np.ndarray, samples: int = 360
) -> int:
    """Petals that stand apart, counted along circles round the centre through their tips.

    Daisy-like flowers show background between their petals, so a circle through the petals
    crosses runs of flower. Overlapping petals merge into one run, so the count is the run
    length over a typical (narrow) run's. Dense blooms (roses, pompon dahlias) give one
    unbroken ring: 0 here, and the outline decides.
    """
    h, w = mask.shape
    reach = float(np.percentile(profile, 90))  # petal tips, even when petals are thin
    angles = np.linspace(0, 2 * np.pi, samples, endpoint=False)
    estimates = []
    for frac in (0.65, 0.75, 0.85, 0.95):
        r = reach * frac
        ys = np.round(cy + np.sin(angles) * r).astype(int)
        xs = np.round(cx + np.cos(angles) * r).astype(int)
        inside = (ys >= 0) & (ys < h) & (xs >= 0) & (xs < w)
        if inside.mean() < 0.85 or r < 6:
            continue
        on = np.zeros(samples, bool)
        on[inside] = mask[ys[inside], xs[inside]]
        if on.all():
            estimates.append(0.0)
            continue
        runs, _ = ndimage.label(np.roll(on, -int(np.argmin(on))))  # start in a gap: no wrap
        widths = np.bincount(runs)[1:] * (2 * np.pi * r / samples)  # px along the circle
        widths = widths[widths >= 2.0]
        if len(widths) < 4:
            estimates.append(0.0)
            continue
        estimates.append(float(widths.sum() / np.percentile(widths, 30)))
    if not estimates:
        return 0
    best = round(float(np.median(estimates)))
    return best if best >= 4 else 0


def brief(a: PhotoAnalysis) -> str:
    """A plain-text description of the photo for coders that cannot see images.

    The flower's lines come from flower pixels only; the background has its own line, so a
    coder never mistakes the foliage's colours for the petals'.
    """
    x0, y0, x1, y1 = a.extent
    by_weight = sorted(a.palette, key=lambda s: -s.weight)
    colours = ", ".join(f"{s.name} {s.hex} ({s.weight:.0%})" for s in by_weight)
    ground = ", ".join(f"{s.name} {s.hex} ({s.weight:.0%})" for s in a.background)
    if a.separated_petals:
        petals = (
            f"about {a.petals} petals radiating from the heart, standing apart"
            " with background showing between them"
        )
    elif a.petal_confidence >= 0.3:
        petals = f"about {a.petals} petals around the heart"
    else:
        petals = (
            "many tightly overlapping petals in layers, no gaps between them"
            f" (a {a.petals}-fold outline is a fair guess)"
        )
    cropped = "; its petals run past the frame's edge" if a.cropped else ""
    caveat = (
        ["(The flower could not be told apart from its background: the colours are a guess.)"]
        if a.segmentation_fallback
        else []
    )
    hues = ", ".join(a.hues) or "mixed"
    ground_hues = ", ".join(a.background_hues) or "mixed"
    return "\n".join(
        [
            f"Photo: a single flower (its hues: {hues}) against a background of {ground_hues}.",
            f"The flower's colours (flower only, most of its area first): {colours}.",
            f"Heart of the flower: {a.centre_colour}.",
            f"Petals: {petals}.",
            f"Size and place: the flower itself covers {a.coverage:.0%} of the frame,"
            f" centred at ({a.centre[0]:.2f}, {a.centre[1]:.2f}) of width/height,"
            f" spanning x {x0:.2f}-{x1:.2f} and y {y0:.2f}-{y1:.2f}{cropped}.",
            f"Background, not part of the flower ({1 - a.coverage:.0%} of the frame): {ground}."
            " Do not paint it as petals; paint a pale paper ground instead.",
            *caveat,
        ]
    )
