"""Benchmark: p5.brush's fill masks as refpool's software raster draws them, against the GPU's.

Each sketch is run in two bare pages (no gate, no worker; `Math.random` seeded alike): one
with the env's Chromium flags and p5.brush served for them (`env_pixels`: the GPU's masks),
one with refpool's flags and p5.brush as the painting page serves it by default. The mask of
every fill is read before and after its last erase pass, and the two are compared: the sum of
levels, the largest level, how many pixels differ, and by how much on average. Optionally the
same against a brush served without the GPU-rounding rewrites, to see what they change.

    .venv/bin/python bench/fill_masks.py [SKETCH.js ...] [--fills 4] [--without-rounding]

Defaults to the faint washes of tests/real_corpus/. Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from env_way import run_bare_page  # noqa: E402

from renderer import brush_patches  # noqa: E402
from renderer.libserver import node_modules  # noqa: E402

CORPUS = ROOT / "tests" / "real_corpus"
DEFAULT = ["faint_wash_near_floor.js", "faint_wash_layers.js"]
# Read the mask just before and just after the last erase pass of each fill (layer 19).
LAST_PASS = "(0!==n&&u.erase(3*n,e),bt.blend(t,!0))"
READ_MASK = (
    "(window.readMask(bt.ctx,r,'before'),0!==n&&u.erase(3*n,e),"
    "window.readMask(bt.ctx,r,'after'),bt.blend(t,!0))"
)
HEAD = """
let state = 12345;
Math.random = () => { state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648; };
window.masks = [];
window.readMask = (ctx, layer, when) => {
  if (layer !== 19) return;
  const data = ctx.getImageData(0, 0, ctx.canvas.width, ctx.canvas.height).data;
  const alpha = new Uint8Array(data.length / 4);
  for (let i = 0; i < alpha.length; i++) alpha[i] = data[4 * i + 3];
  window.masks.push({ when, alpha: Array.from(alpha) });
};
"""


def served(gpu: bool, rounding: bool) -> str:
    raw = (node_modules() / "p5.brush" / "dist" / "p5.brush.js").read_text(encoding="utf-8")
    if gpu:
        library = brush_patches.served_brush(raw, env_pixels=True)
    elif rounding:
        library = brush_patches.served_brush(raw)
    else:  # float16 masks, no rounding of layers or erasing discs
        base = brush_patches.leaner_pigment_mix(brush_patches.deterministic_brush(raw))
        library = brush_patches.float_fill_masks(base)
    if library.count(LAST_PASS) != 1:
        sys.exit("this p5.brush's fill is not the one this benchmark reads")
    return library.replace(LAST_PASS, READ_MASK)


async def masks_of(sketch: str, gpu: bool, rounding: bool, fills: int) -> list[np.ndarray]:
    masks = await run_bare_page(
        sketch,
        served(gpu, rounding),
        head_js=HEAD,
        env_flags=gpu,
        ready_js=f"window.masks.length >= {2 * fills}",
        result_js="window.masks",
    )
    assert isinstance(masks, list)
    return [np.array(m["alpha"], dtype=np.int32) for m in masks[: 2 * fills]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sketches", nargs="*", type=Path)
    parser.add_argument("--fills", type=int, default=4, help="fills to compare per sketch")
    parser.add_argument(
        "--without-rounding",
        action="store_true",
        help="also compare a brush with float16 masks and no rounding of layers or erasing",
    )
    args = parser.parse_args()
    sketches = args.sketches or [CORPUS / name for name in DEFAULT]
    for path in sketches:
        source = path.read_text(encoding="utf-8")
        gpu = asyncio.run(masks_of(source, True, True, args.fills))
        variants = [("refpool", True)] + (
            [("float16 only", False)] if args.without_rounding else []
        )
        print(f"\n{path.name}: {len(gpu) // 2} fills (mask read before / after the last erase)")
        for label, rounding in variants:
            ours = asyncio.run(masks_of(source, False, rounding, args.fills))
            for k, (g, o) in enumerate(zip(gpu, ours, strict=False)):
                when = "before" if k % 2 == 0 else "after "
                print(
                    f"  {label:13s} fill {k // 2} {when}: sum {o.sum():>8,} vs GPU {g.sum():>8,}"
                    f" ({o.sum() / max(g.sum(), 1):.3f}x), max {o.max()} vs {g.max()},"
                    f" {int((o != g).sum()):,} px differ, mean |d| {np.abs(o - g).mean():.3f}"
                )


if __name__ == "__main__":
    main()
