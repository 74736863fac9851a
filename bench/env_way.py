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


async def run_bare_page(
    sketch: str,
    brush_js: str,
    *,
    head_js: str,
    env_flags: bool,
    ready_js: str,
    result_js: str,
    settle_s: float = 0.0,
) -> object:
    """`head_js`, p5, `brush_js` and the sketch's own code in a bare page (no gate, no second
    realm), on the env's Chromium flags or refpool's: waits for `ready_js`, then `settle_s`,
    and returns what `result_js` evaluates to. Also used by bench/fill_masks.py."""
    from playwright.async_api import async_playwright

    page = (
        f'<html><body style="margin:0"><script>{head_js}</script>'
        '<script src="/p5.js"></script><script src="/brush.js"></script>'
        '<script src="/sketch.js"></script><script>new p5();</script></body></html>'
    )
    p5 = (node_modules() / "p5" / "lib" / "p5.min.js").read_text(encoding="utf-8")
    files = {
        "/": (page, "text/html"),
        "/p5.js": (p5, "text/javascript"),
        "/brush.js": (brush_js, "text/javascript"),
        "/sketch.js": (sketch, "text/javascript"),
    }
    chromium = os.environ.get("REFPOOL_CHROMIUM", "/usr/bin/chromium")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(args=launch_flags(env_flags), executable_path=chromium)
        tab = await browser.new_page(viewport={"width": 600, "height": 600})

        async def serve(route) -> None:
            body, kind = files["/" + route.request.url.split("/", 3)[3]]
            await route.fulfill(body=body, content_type=kind + "; charset=utf-8")

        await tab.route("http://bare-page.test/**", serve)
        await tab.goto("http://bare-page.test/")
        await tab.wait_for_function(ready_js, timeout=600_000)
        await asyncio.sleep(settle_s)
        result = await tab.evaluate(result_js)
        await browser.close()
    return result


async def env_way_png(sketch: str, seed: int, settle_s: float) -> bytes:
    seeded = SEEDED_RANDOM.read_text(encoding="utf-8").rstrip().rstrip(";")
    raw = (node_modules() / "p5.brush" / "dist" / "p5.brush.js").read_text(encoding="utf-8")
    url = await run_bare_page(
        sketch,
        served_brush(raw, env_pixels=True),
        head_js=f"Math.random = ({seeded})({seed});",
        env_flags=True,
        ready_js="!!document.querySelector('canvas')",
        result_js="document.querySelector('canvas').toDataURL('image/png')",
        settle_s=settle_s,  # the env waits for its page to settle too
    )
    return base64.b64decode(str(url).split(",", 1)[1])


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
