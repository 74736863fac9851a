"""Photo analysis: palette (OKLab k-means), flower mask and extent, hues, petal count, composition.

Everything is measured on a small copy (ANALYSIS_SIDE px) with numpy, so it takes ~50 ms.
The result feeds the procedural generator, the heuristic critic and the text brief that is
sent to coders which cannot see images.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage

ANALYSIS_SIDE = 160


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
    for _ in range(1, k):
        d2 = np.min(((points[:, None, :] - np.array(picked)[None]) ** 2).sum(-1), axis=1)
        total = d2.sum()
        idx = rng.choice(n, p=d2 / total) if total > 0 else rng.integers(n)
        picked.append(points[idx])
    centres = np.array(picked)
    labels = np.zeros(n, dtype=int)
    for _ in range(iters):
        labels = ((points[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)
        new = np.array(
            [points[labels == j].mean(0) if np.any(labels == j) else centres[j] for j in range(k)]
        )
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
        return "white" if lightness > 0.85 else "black" if lightness < 0.3 else "grey"
    hue = math.degrees(math.atan2(b, a)) % 360
    name = next(n for bound, n in HUE_NAMES if hue < bound)
    if lightness > 0.82 and name in ("red", "purple", "pink"):
        return "pale pink"
    if lightness < 0.45:
        return f"deep {name}"
    return name


# -- the analysis record --------------------------------------------------------------------
@dataclass
class Swatch:
    hex: str
    weight: float  # share of the flower's pixels
    lab: list[float]
    name: str


@dataclass
class PhotoAnalysis:
    width: int
    height: int
    palette: list[Swatch]  # flower colours, darkest first
    background: list[Swatch]  # ground colours around the flower
    centre_colour: str  # colour at the heart of the flower
    hues: list[str]  # dominant hue names, most prominent first
    mask: np.ndarray = field(repr=False)  # bool, ANALYSIS_SIDE-scale, True = flower
    extent: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)  # x0,y0,x1,y1 (0-1)
    centre: tuple[float, float] = (0.5, 0.5)  # flower centroid (0-1 of width, height)
    radius: float = 0.3  # mean flower radius / shorter side
    coverage: float = 0.0  # share of the frame that is flower
    petals: int = 5
    petal_confidence: float = 0.0  # 0-1: strength of the angular periodicity
    profile: list[float] = field(default_factory=list, repr=False)  # radius by angle (36 bins)

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
    mask, petals_only = flower_masks(lab)
    flower = lab[petals_only] if petals_only.sum() > 20 else lab[mask]
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
    hues = []
    for swatch in sorted(palette, key=lambda s: -s.weight):
        base = swatch.name.replace("deep ", "").replace("pale ", "")
        if base not in hues:
            hues.append(base)
    return PhotoAnalysis(
        width=w,
        height=h,
        palette=palette,
        background=background,
        centre_colour=to_hex(oklab_to_srgb(centre_lab)),
        hues=hues[:3],
        mask=mask,
        extent=(xs.min() / w, ys.min() / h, (xs.max() + 1) / w, (ys.max() + 1) / h),
        centre=(float(cx / w), float(cy / h)),
        radius=float(radius),
        coverage=float(area / mask.size),
        petals=petals,
        petal_confidence=confidence,
        profile=[round(float(v), 4) for v in _bin(profile, 36)],
    )


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


def flower_masks(lab: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(silhouette, petals): the flower with holes filled, and only its own colour clusters.

    The flower: colour clusters that avoid the frame's border, nearest the centre.

    Photos of one flower frame it in the middle; leaves, sky and soil touch the border.
    A cluster is flower-like when its share of border pixels is low and its chroma or
    lightness stands out; the largest connected blob near the centre wins, holes filled.
    """
    h, w, _ = lab.shape
    flat = lab.reshape(-1, 3)
    centres, labels = kmeans(flat[:: max(1, len(flat) // 6000)], 6, seed=seed)
    labels = ((flat[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1).reshape(h, w)
    border = np.zeros((h, w), bool)
    bw = max(2, min(h, w) // 12)
    border[:bw], border[-bw:], border[:, :bw], border[:, -bw:] = True, True, True, True
    yy, xx = np.mgrid[0:h, 0:w]
    centrality = 1 - np.hypot((yy - h / 2) / (h / 2), (xx - w / 2) / (w / 2)) / math.sqrt(2)
    ground = np.median(flat[border.reshape(-1)], axis=0)
    chosen = np.zeros((h, w), bool)
    for j, c in enumerate(centres):
        members = labels == j
        if not members.any():
            continue
        border_share = (members & border).sum() / max(1, border.sum())
        interior_share = members.sum() / members.size
        contrast = np.linalg.norm(c - ground)
        central = centrality[members].mean()
        score = contrast * (0.5 + central) - 1.5 * border_share * (border_share > interior_share)
        if score > 0.08 and border_share < 0.35:
            chosen |= members
    if chosen.sum() < 0.02 * h * w:  # nothing stood out: fall back to a central ellipse
        chosen = ((yy - h / 2) / (h * 0.35)) ** 2 + ((xx - w / 2) / (w * 0.35)) ** 2 <= 1
    chosen = ndimage.binary_opening(chosen, iterations=1)
    chosen = ndimage.binary_closing(chosen, iterations=2)
    blobs, n = ndimage.label(chosen)
    if n > 1:  # keep the biggest blob, weighted towards the middle
        weights = ndimage.sum(centrality + 0.3, blobs, index=range(1, n + 1))
        chosen = blobs == (int(np.argmax(weights)) + 1)
    filled = ndimage.binary_fill_holes(chosen)
    if filled.sum() < 0.01 * h * w:
        filled = ((yy - h / 2) / (h * 0.35)) ** 2 + ((xx - w / 2) / (w * 0.35)) ** 2 <= 1
        chosen = filled
    return filled, chosen


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
    if confidence < 0.08:
        return 5, round(confidence, 3)
    return int(best), round(min(1.0, confidence * 3), 3)


def _bin(profile: np.ndarray, n: int) -> np.ndarray:
    norm = profile / (profile.max() or 1)
    return norm.reshape(n, -1).mean(1)


def brief(a: PhotoAnalysis) -> str:
    """A plain-text description of the photo for coders that cannot see images."""
    x0, y0, x1, y1 = a.extent
    colours = ", ".join(f"{s.name} {s.hex} ({s.weight:.0%})" for s in a.palette)
    ground = ", ".join(f"{s.name} {s.hex}" for s in a.background)
    petals = (
        f"about {a.petals} petals around the centre"
        if a.petal_confidence >= 0.3
        else f"many overlapping petals (a {a.petals}-fold outline is a fair guess)"
    )
    return "\n".join(
        [
            f"Photo: a single flower, dominant hues {', '.join(a.hues) or 'mixed'}.",
            f"Flower colours, darkest first: {colours}.",
            f"Heart of the flower: {a.centre_colour}.",
            f"Background around it: {ground} (paint a pale paper ground instead).",
            f"Shape: {petals}; the flower fills {a.coverage:.0%} of the frame,"
            f" centred at ({a.centre[0]:.2f}, {a.centre[1]:.2f}) of width/height,"
            f" spanning x {x0:.2f}-{x1:.2f} and y {y0:.2f}-{y1:.2f}.",
        ]
    )
