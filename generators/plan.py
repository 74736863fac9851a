"""The procedural painter's plan: what to paint, chosen from the photo and a seed.

`plan_painting(analysis, seed)` chooses a Plan: petal shape, rings of translucent petals,
palette taken from the photo in OKLab, bleed, texture, centre, accents, leaves and layout.
`revise_plan(plan, analysis, measures)` moves a plan towards the photo per the heuristic critic.
generators/procedural.py writes a plan out as a p5.brush program.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from generators.analysis import PhotoAnalysis, hex_to_oklab, oklab_to_srgb, to_hex
from refpool.core.contracts import Violation
from refpool.core.seeds import derive_seed

CANVAS = 600
SHAPES = ("round", "pointed", "ruffled", "notched", "cupped")
MAX_FILLS = 30  # petals, leaves, centre, accents and wash: the render cost of a program
PAPERS = ("#f6efe2", "#f8f3ea", "#f3ede1", "#faf5ec", "#f5f0e6")


@dataclass
class Ring:
    colour: str
    opacity: int  # 180-230 on petals (reference prompt)
    reach: float  # petal length, px
    spread: float  # half-width of a petal, degrees
    count: int
    offset: float  # rotation of the ring, degrees
    curvature: float
    bleed: float  # 0.2-0.3
    texture: float
    border: float


@dataclass
class Plan:
    seed: int
    subject: str
    shape: str
    cx: float
    cy: float
    rings: list[Ring]
    centre: str
    centre_r: float
    accent: str
    dots: int
    leaves: list[list[float]]  # [angle, length, width]
    leaf_colour: str
    paper: str
    wash: str | None = None  # a pale backdrop wash, for pale flowers on pale paper
    bleed_dir: str = "out"
    jitter: float = 6.0
    revision: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Plan:
        data = json.loads(text)
        data["rings"] = [Ring(**r) for r in data["rings"]]
        return cls(**data)


# -- colour helpers (OKLab) ----------------------------------------------------------------
def _mix(colour: str, target: str, t: float) -> str:
    a, b = hex_to_oklab(colour), hex_to_oklab(target)
    return to_hex(oklab_to_srgb(a + (b - a) * t))


def _shade(colour: str, dl: float, chroma: float = 1.0, hue_deg: float = 0.0) -> str:
    lightness, a, b = hex_to_oklab(colour)
    c, h = math.hypot(a, b) * chroma, math.atan2(b, a) + math.radians(hue_deg)
    lab = np.array([min(0.97, max(0.2, lightness + dl)), c * math.cos(h), c * math.sin(h)])
    return to_hex(oklab_to_srgb(lab))


def _is_leafy(lab: Sequence[float] | np.ndarray) -> bool:
    hue = math.degrees(math.atan2(lab[2], lab[1])) % 360
    return 100 < hue < 200 and math.hypot(lab[1], lab[2]) > 0.03


def _room(cx: float, cy: float, angle_deg: float, margin: float = 20) -> float:
    """Distance from (cx, cy) to the canvas edge (less a margin) along an angle."""
    dx, dy = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    limits = [
        ((CANVAS - margin - cx) / dx if dx > 1e-6 else (margin - cx) / dx if dx < -1e-6 else 1e9),
        ((CANVAS - margin - cy) / dy if dy > 1e-6 else (margin - cy) / dy if dy < -1e-6 else 1e9),
    ]
    return max(40.0, min(limits))


# -- planning --------------------------------------------------------------------------------
def plan_painting(analysis: PhotoAnalysis, seed: int, subject: str = "flower") -> Plan:
    """A seeded, photo-driven plan. Different seeds differ in structure, not just colour."""
    rng = random.Random(derive_seed("plan", seed))
    petals_src = [s for s in analysis.palette if not _is_leafy(s.lab)] or analysis.palette
    by_weight = sorted(petals_src, key=lambda s: -s.weight)
    main = by_weight[0].hex
    second = by_weight[1].hex if len(by_weight) > 1 else _shade(main, -0.12)
    darkest = min(petals_src, key=lambda s: s.lab[0]).hex
    pale_flower = hex_to_oklab(main)[0] > 0.83

    many = analysis.petals >= 9 or (analysis.petal_confidence < 0.3 and rng.random() < 0.4)
    # many narrow petals (daisy-like) are pointed, rounded or notched at the tip
    shape = rng.choice(("pointed", "round", "notched") if many else SHAPES)
    count = (
        rng.choice((10, 11, 12))
        if many
        else max(4, min(8, analysis.petals + rng.choice((0, 0, 1))))
    )
    n_rings = 2 if count >= 9 else rng.choice((2, 3, 3))
    # petal fills are the render cost; keep the whole program to ~10-30 fills
    while n_rings * count > 24:
        n_rings -= 1

    # layout: centred on the canvas, nudged towards where the photo's flower sits
    cx = CANVAS / 2 + (analysis.centre[0] - 0.5) * CANVAS * 0.25 + rng.uniform(-12, 12)
    cy = CANVAS / 2 + (analysis.centre[1] - 0.5) * CANVAS * 0.25 + rng.uniform(-12, 12)
    radius = CANVAS * min(0.4, max(0.3, 0.2 + analysis.radius * 0.4)) * rng.uniform(0.92, 1.06)
    radius = min(radius, min(cx, cy, CANVAS - cx, CANVAS - cy) - 30)  # paper margin
    if shape == "cupped":  # discs reach further than their centres: keep paper around them
        radius *= 0.85

    light_outside = rng.random() < 0.7  # pale outer petals, deep inner ones (or the reverse)
    chroma = rng.uniform(0.95, 1.25)
    hue_shift = rng.uniform(-8, 8)
    rings = []
    for i in range(n_rings):
        t = i / max(1, n_rings - 1)  # 0 = outermost
        if pale_flower:
            base = _mix(_shade(main, -0.05, 1.0), "#b8c4d8", 0.25 * t + rng.uniform(0, 0.1))
        else:
            src = main if i < n_rings - 1 else second
            dl = (0.1 - 0.2 * t) if light_outside else (-0.08 + 0.18 * t)
            base = _shade(src, dl, chroma, hue_shift)
        # petals that stand apart (a daisy) make one full ring; the inner layer is sparser
        ring_count = count if i == 0 or not analysis.separated_petals else count // 2 + 1
        spread_full = 360 / ring_count
        rings.append(
            Ring(
                colour=base,
                opacity=int(rng.uniform(185, 215) + 10 * t),
                reach=round(radius * (1.0 - 0.22 * i * rng.uniform(0.9, 1.2)), 1),
                spread=round(spread_full * rng.uniform(0.42, 0.62) * (0.9 if many else 1.0), 1),
                count=ring_count,
                offset=round(rng.uniform(0, 360) if i == 0 else (spread_full / 2) * (i % 2), 1),
                curvature=round(rng.uniform(0.35, 0.75), 2),
                bleed=round(rng.uniform(0.2, 0.3), 2),
                texture=round(rng.uniform(0.3, 0.65), 2),
                border=round(rng.uniform(0.3, 0.6), 2),
            )
        )

    centre = _shade(analysis.centre_colour, -0.08, 1.1)
    if abs(hex_to_oklab(centre)[0] - hex_to_oklab(rings[-1].colour)[0]) < 0.08:
        centre = _shade(darkest, -0.1)
    accent_choices = ["#f4c542", "#e9a93a", _shade(centre, 0.25, 1.2), "#5a2a2a"]
    leafy = [s.hex for s in analysis.background if _is_leafy(s.lab)]
    # leaves: the photo's foliage pulled towards a sage green, so they read as leaves
    leaf_colour = _mix(_shade(leafy[0], 0.15, 1.1), "#7a9a5e", 0.45) if leafy else "#7a9a5e"
    n_leaves = rng.choice((0, 1, 2, 2))
    leaves = []
    for k in range(n_leaves):
        angle = rng.uniform(20, 160) if k == 0 else rng.uniform(200, 340)
        length = min(radius * rng.uniform(1.3, 1.6), _room(cx, cy, angle))
        leaves.append([round(angle, 1), round(length, 1), round(rng.uniform(14, 22), 1)])
    paper = rng.choice(PAPERS)
    wash = _mix(leafy[0], paper, 0.6) if pale_flower and leafy else None
    if pale_flower and not wash:
        wash = _mix("#9fb0c8", paper, 0.55)
    centre_r = round(radius * rng.uniform(0.14, 0.24), 1)
    accent = rng.choice(accent_choices)
    dots = rng.choice((0, 3, 5, 7))
    # every fill costs render time: accents give way first when the petals are many
    dots = min(dots, max(0, MAX_FILLS - (n_rings * count + len(leaves) + 1 + bool(wash))))
    return Plan(
        seed=seed,
        subject=subject,
        shape=shape,
        cx=round(cx, 1),
        cy=round(cy, 1),
        rings=rings,
        centre=centre,
        centre_r=centre_r,
        accent=accent,
        dots=dots,
        leaves=leaves,
        leaf_colour=leaf_colour,
        paper=paper,
        wash=wash,
        bleed_dir=rng.choice(("out", "out", "in")),
        jitter=round(rng.uniform(3, 9), 1),
    )


# -- revision --------------------------------------------------------------------------------
def revise_plan(
    plan: Plan,
    analysis: PhotoAnalysis,
    measures: dict[str, Any],
    violations: Sequence[Violation] = (),
) -> Plan:
    """Adjust a plan using the heuristic critic's measurements (see critics.measure).

    measures keys used: coverage, palette_shift (list of [render_hex, photo_hex]),
    centre (x, y 0-1), edge_softness (0-1), layering (0-1).
    """
    rng = random.Random(derive_seed("revise", plan.seed, plan.revision))
    notes = []
    scale = 1.0
    coverage = measures.get("coverage") or 0.0
    codes = {v.code for v in violations}
    if coverage < 0.18 or "blank_canvas" in codes or "coverage" in codes:
        scale = min(1.3, math.sqrt(0.3 / max(coverage, 0.05)))
        notes.append(f"coverage {coverage:.2f} was low: enlarged the flower x{scale:.2f}")
    elif coverage > 0.6:
        scale = max(0.8, math.sqrt(0.45 / coverage))
        notes.append(f"coverage {coverage:.2f} was high: shrank the flower x{scale:.2f}")
    # the critic names rendered colours (paint over paper), not fill colours: move the ring
    # nearest each rendered colour by the rendered -> photo difference
    deltas: dict[int, np.ndarray] = {}
    for render_hex, photo_hex in measures.get("palette_shift", []):
        seen = hex_to_oklab(render_hex)
        nearest = min(
            range(len(plan.rings)),
            key=lambda i: float(np.linalg.norm(hex_to_oklab(plan.rings[i].colour) - seen)),
        )
        deltas.setdefault(nearest, (hex_to_oklab(photo_hex) - seen) * 0.7)
    rings = []
    for i, ring in enumerate(plan.rings):
        colour = ring.colour
        if i in deltas:
            colour = to_hex(oklab_to_srgb(hex_to_oklab(colour) + deltas[i]))
        rings.append(
            replace(
                ring,
                colour=colour,
                reach=round(min(ring.reach * scale, 270.0), 1),
                bleed=round(min(0.3, ring.bleed + 0.03), 2)
                if measures.get("edge_softness", 1) < 0.5
                else ring.bleed,
                offset=round(ring.offset + rng.uniform(-5, 5), 1),
            )
        )
    if deltas:
        notes.append("moved petal colours towards the photo's palette")
    if measures.get("edge_softness", 1) < 0.5:
        notes.append("raised bleed for softer edges")
    if measures.get("layering", 1) < 0.4 and len(rings) < 3 and rings[0].count * 3 <= 26:
        inner = replace(
            rings[-1],
            colour=_shade(rings[-1].colour, -0.1, 1.1),
            reach=round(rings[-1].reach * 0.7, 1),
            opacity=min(230, rings[-1].opacity + 10),
            offset=round(rings[-1].offset + 180 / rings[-1].count, 1),
        )
        rings.append(inner)
        notes.append("added a deeper inner ring of petals for layering")
    cx, cy = plan.cx, plan.cy
    centre = measures.get("centre")
    if centre:
        dx, dy = (0.5 - centre[0]) * CANVAS, (0.5 - centre[1]) * CANVAS
        if math.hypot(dx, dy) > 25:
            cx, cy = round(cx + dx * 0.6, 1), round(cy + dy * 0.6, 1)
            notes.append("re-centred the flower")
    return replace(
        plan,
        cx=cx,
        cy=cy,
        rings=rings,
        centre_r=round(plan.centre_r * scale, 1),
        leaves=[
            [a, round(min(length * scale, _room(cx, cy, a)), 1), w] for a, length, w in plan.leaves
        ],
        revision=plan.revision + 1,
        notes=notes or ["kept the composition; refreshed petal placement"],
    )
