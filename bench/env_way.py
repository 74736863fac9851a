"""A sketch run as the watercolour env's renderer runs it, beside refpool's render of it.

The env's page has no gate and no second realm: it seeds `Math.random` with its LCG, loads
p5 and p5.brush, and runs the sketch's own code there, on its Chromium flags. This script
builds that page (p5.brush with only refpool's bit-exact rewrites, `env_pixels`), reads the
canvas after the sketch has painted, and prints its paint fraction by the env's rule beside
refpool's render of the same program and seed under the `env` profile, with `--env-pixels`
and by default: the figures tests/real_corpus/manifest.json records as the env's.

    .venv/bin/python bench/env_way.py SKETCH.js [...] [--seed 0] [--settle 6]

Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import os
import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from renderer import RenderConfig, SyncRenderer  # noqa: E402
from renderer.browser import launch_flags  # noqa: E402
from renderer.brush_patches import served_brush  # noqa: E402
from renderer.env_api import paint_fraction  # noqa: E402
from renderer.job import SEEDED_RANDOM  # noqa: E402
from renderer.libserver import node_modules  # noqa: E402


async def env_way_png(sketch: str, seed: int, settle_s: float) -> bytes:
    from playwright.async_api import async_playwright

    seeded = SEEDED_RANDOM.read_text(encoding="utf-8").rstrip().rstrip(";")
    page = (
        f'<html><body style="margin:0"><script>Math.random = ({seeded})({seed});</script>'
        '<script src="/p5.js"></script><script src="/brush.js"></script>'
        '<script src="/sketch.js"></script><script>new p5();</script></body></html>'
    )
    nm = node_modules()
    brush = (nm / "p5.brush" / "dist" / "p5.brush.js").read_text(encoding="utf-8")
    files = {
        "/": (page, "text/html"),
        "/p5.js": (
            (nm / "p5" / "lib" / "p5.min.js").read_text(encoding="utf-8"),
            "text/javascript",
        ),
        "/brush.js": (served_brush(brush, env_pixels=True), "text/javascript"),
        "/sketch.js": (sketch, "text/javascript"),
    }
    chromium = os.environ.get("REFPOOL_CHROMIUM", "/usr/bin/chromium")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(args=launch_flags(True), executable_path=chromium)
        tab = await browser.new_page(viewport={"width": 600, "height": 600})

        async def serve(route) -> None:
            body, kind = files["/" + route.request.url.split("/", 3)[3]]
            await route.fulfill(body=body, content_type=kind + "; charset=utf-8")

        await tab.route("http://env-way.test/**", serve)
        await tab.goto("http://env-way.test/")
        await tab.wait_for_function("!!document.querySelector('canvas')", timeout=120_000)
        await asyncio.sleep(settle_s)  # the env waits for its page to settle too
        url = await tab.evaluate("document.querySelector('canvas').toDataURL('image/png')")
        await browser.close()
    return base64.b64decode(url.split(",", 1)[1])


def _rgb(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sketches", nargs="+", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--settle", type=float, default=6.0, help="seconds to let it paint")
    args = parser.parse_args()
    for path in args.sketches:
        source = path.read_text(encoding="utf-8")
        theirs = asyncio.run(env_way_png(source, args.seed, args.settle))
        print(f"{path.name}: the env's way {paint_fraction(theirs):.4f}")
        for env_pixels in (True, False):
            with SyncRenderer(RenderConfig(slots=1, env_pixels=env_pixels)) as renderer:
                ours = renderer.render(source, seed=args.seed, profile="env")
            label = "refpool --env-pixels" if env_pixels else "refpool (default)"
            if not ours.png:
                print(f"  {label:21s} refused: {[v.code for v in ours.gate.violations]}")
                continue
            differ = int((np.abs(_rgb(ours.png) - _rgb(theirs)).sum(axis=-1) > 0).sum())
            print(
                f"  {label:21s} {paint_fraction(ours.png):.4f}, {differ:,} pixels differ,"
                f" verdict {'accepted' if ours.accepted else ours.gate.violations[0].code}"
            )


if __name__ == "__main__":
    main()
