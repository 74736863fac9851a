"""The embedded default coder: writes a Plan (generators/plan.py) as a p5.brush program.

`write_program(plan)` turns a plan into a reference-profile sketch (only allowlisted brush calls).
The plan travels inside the program as a `// plan:` comment, so a revision needs only the source:
`revise_program` reads it back, revises it and writes the program again. No model, no network.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generators.analysis import PhotoAnalysis
from generators.plan import CANVAS, Plan, plan_painting, revise_plan
from refpool.core.contracts import Violation

PLAN_TAG = "// plan: "


# -- writing the program ---------------------------------------------------------------------
_PETAL_JS = {
    "round": """  brush.beginShape(curv);
  brush.vertex(cx + cos(a) * r * 0.08, cy + sin(a) * r * 0.08);
  brush.vertex(cx + cos(a - s * 0.9) * r * 0.5, cy + sin(a - s * 0.9) * r * 0.5);
  brush.vertex(cx + cos(a - s * 0.6) * r * 0.92, cy + sin(a - s * 0.6) * r * 0.92);
  brush.vertex(cx + cos(a) * r, cy + sin(a) * r);
  brush.vertex(cx + cos(a + s * 0.6) * r * 0.92, cy + sin(a + s * 0.6) * r * 0.92);
  brush.vertex(cx + cos(a + s * 0.9) * r * 0.5, cy + sin(a + s * 0.9) * r * 0.5);
  brush.endShape(true);""",
    "pointed": """  brush.beginShape(curv);
  brush.vertex(cx + cos(a) * r * 0.05, cy + sin(a) * r * 0.05);
  brush.vertex(cx + cos(a - s) * r * 0.55, cy + sin(a - s) * r * 0.55);
  brush.vertex(cx + cos(a - s * 0.35) * r * 0.9, cy + sin(a - s * 0.35) * r * 0.9);
  brush.vertex(cx + cos(a) * r, cy + sin(a) * r);
  brush.vertex(cx + cos(a + s * 0.35) * r * 0.9, cy + sin(a + s * 0.35) * r * 0.9);
  brush.vertex(cx + cos(a + s) * r * 0.55, cy + sin(a + s) * r * 0.55);
  brush.endShape(true);""",
    "ruffled": """  brush.beginShape(curv);
  brush.vertex(cx + cos(a) * r * 0.06, cy + sin(a) * r * 0.06);
  for (let k = 0; k <= 6; k++) {
    const t = -1 + k / 3;
    const edge = k % 2 === 0 ? 1.0 : 0.86;
    const along = k === 0 || k === 6 ? 0.6 : edge;
    brush.vertex(cx + cos(a + t * s) * r * along, cy + sin(a + t * s) * r * along);
  }
  brush.endShape(true);""",
    "notched": """  brush.beginShape(curv);
  brush.vertex(cx + cos(a) * r * 0.06, cy + sin(a) * r * 0.06);
  brush.vertex(cx + cos(a - s * 0.9) * r * 0.55, cy + sin(a - s * 0.9) * r * 0.55);
  brush.vertex(cx + cos(a - s * 0.55) * r * 0.98, cy + sin(a - s * 0.55) * r * 0.98);
  brush.vertex(cx + cos(a) * r * 0.84, cy + sin(a) * r * 0.84);
  brush.vertex(cx + cos(a + s * 0.55) * r * 0.98, cy + sin(a + s * 0.55) * r * 0.98);
  brush.vertex(cx + cos(a + s * 0.9) * r * 0.55, cy + sin(a + s * 0.9) * r * 0.55);
  brush.endShape(true);""",
    "cupped": """  // a cupped petal: an irregular disc set out from the centre
  brush.circle(cx + cos(a) * r * 0.5, cy + sin(a) * r * 0.5, r * min(0.45, 0.42 * (s / 32)), 0.35 + curv * 0.4);""",
}


def write_program(plan: Plan, round_: int = 0) -> str:
    """A complete reference-profile sketch for the plan (deterministic for a given plan)."""
    rings = ",\n".join(
        f"  ['{r.colour}', {r.opacity}, {r.reach}, {r.spread}, {r.count}, {r.offset},"
        f" {r.curvature}, {r.bleed}, {r.texture}, {r.border}]"
        for r in plan.rings
    )
    leaves = ", ".join(f"[{a}, {length}, {w}]" for a, length, w in plan.leaves)
    wash = ""
    if plan.wash:
        # a wash larger than ~40% of the canvas would become the "ground" the gate measures
        # coverage against, so keep it modest and inside the paper
        edge = min(plan.cx, plan.cy, CANVAS - plan.cx, CANVAS - plan.cy) - 12
        outer = min(max(r.reach for r in plan.rings) * 1.12, CANVAS * 0.34, edge)
        wash = f"""
  // a pale wash behind the flower so light petals read against the paper
  brush.fill('{plan.wash}', 160);
  brush.fillBleed(0.3, 'out');
  brush.fillTexture(0.6, 0.5);
  brush.circle(CX, CY, {round(outer, 1)}, 0.45);
"""
    dots = ""
    if plan.dots:
        dots = f"""
  // accent dots: pollen and stamens
  brush.fill('{plan.accent}', 225);
  brush.fillBleed(0.2, 'out');
  for (let k = 0; k < {plan.dots}; k++) {{
    const a = random(360);
    const d = random({plan.centre_r * 0.3:.1f}, {plan.centre_r * 1.1:.1f});
    brush.circle(CX + cos(a) * d, CY + sin(a) * d, random(3, 6));
  }}
"""
    notes = "".join(f"// revision: {n}\n" for n in plan.notes)
    return f"""// refpool procedural painter: {plan.subject}, {plan.shape} petals, seed {plan.seed}, round {round_}
{notes}{PLAN_TAG}{plan.to_json()}
const CX = {plan.cx};
const CY = {plan.cy};
// colour, opacity, reach, half-width (deg), count, rotation, curvature, bleed, texture, border
const RINGS = [
{rings}
];
const LEAVES = [{leaves}];

function setup() {{
  createCanvas(600, 600, WEBGL);
  angleMode(DEGREES);
  brush.scaleBrushes(2.5);
  noLoop();
}}

function petal(cx, cy, a, r, s, curv) {{
{_PETAL_JS[plan.shape]}
}}

function leaf(cx, cy, a, len, w) {{
  // starts under the outer petals so it reads as growing from behind the flower
  cx = cx + cos(a) * len * 0.35;
  cy = cy + sin(a) * len * 0.35;
  len = len * 0.65;
  brush.beginShape(0.6);
  brush.vertex(cx, cy);
  brush.vertex(cx + cos(a - w) * len * 0.55, cy + sin(a - w) * len * 0.55);
  brush.vertex(cx + cos(a) * len, cy + sin(a) * len);
  brush.vertex(cx + cos(a + w) * len * 0.55, cy + sin(a + w) * len * 0.55);
  brush.endShape(true);
}}

function draw() {{
  translate(-width / 2, -height / 2);
  background('{plan.paper}');
  brush.noStroke();
{wash}
  // leaves first, so petals overlap them
  for (const [a, len, w] of LEAVES) {{
    brush.fill('{plan.leaf_colour}', 190);
    brush.fillBleed(0.25, 'out');
    brush.fillTexture(0.5, 0.4);
    leaf(CX, CY, a, len, w);
  }}

  // translucent rings of petals, outermost first
  for (const [colour, opacity, reach, spread, count, offset, curv, bleed, tex, border] of RINGS) {{
    for (let i = 0; i < count; i++) {{
      brush.fill(colour, opacity);
      brush.fillBleed(bleed, '{plan.bleed_dir}');
      brush.fillTexture(tex, border);
      const a = offset + i * (360 / count) + random(-{plan.jitter}, {plan.jitter});
      petal(CX, CY, a, reach * random(0.93, 1.05), spread, curv);
    }}
  }}

  // the darker heart of the flower
  brush.fill('{plan.centre}', 230);
  brush.fillBleed(0.22, 'out');
  brush.fillTexture(0.45, 0.6);
  brush.circle(CX, CY, {plan.centre_r}, 0.4);
{dots}}}
"""


def plan_from_program(source: str) -> Plan | None:
    """The plan a program was written from (None if it carries none, or a damaged one)."""
    for line in source.splitlines():
        if line.startswith(PLAN_TAG):
            try:
                return Plan.from_json(line[len(PLAN_TAG) :])
            except (ValueError, TypeError, KeyError):
                return None
    return None


def generate_program(analysis: PhotoAnalysis, seed: int, subject: str = "flower") -> str:
    return write_program(plan_painting(analysis, seed, subject), round_=0)


def revise_program(
    source: str,
    analysis: PhotoAnalysis,
    measures: dict[str, Any],
    round_: int,
    violations: Sequence[Violation] = (),
) -> str | None:
    """The program revised towards the photo; None when it carries no plan (not written here),
    so the caller paints afresh with a seed of its own."""
    plan = plan_from_program(source)
    if plan is None:
        return None
    return write_program(revise_plan(plan, analysis, measures, violations), round_=round_)
