"""Renderer benchmark: prints figures, asserts nothing. Compare ratios from one run.

    .venv/bin/python bench/render.py [--repeats 5] [--env-renderer ENV/core/render.py]
    .venv/bin/python bench/render.py --ray [--jobs 8]    # 1 and 2 Ray Serve replicas

Measures, on the reference sketches in tests/sketches/ (copied from shared/sketches):
  * warm median per render of coral_hibiscus.js and yellow_hibiscus.js (coral goal <= 2 s),
  * harness overhead as empty.js per render (goal <= 0.15 s),
  * CPU-seconds per render (this process tree, exited page processes included; and the whole
    machine's busy time as a cross-check at rest), the CPU floor cores*60/cpu_s renders/min,
    and pool throughput as a fraction of it (goal >= 0.85), with how busy the cores were,
  * what the exact p5.brush speed-up (renderer/brush_patches.py) saves: renders alternating
    between a renderer serving it and one serving p5.brush only made deterministic, with
    their PNG bytes compared,
  * an anchor-style baseline in the same run: a fresh browser and page per render, as the
    published experiment rendered,
  * what isolation and the AST gate cost (one run, beside the figures above): a fresh
    page per job in the slot's context, and a fresh context + page after a failure (wall
    time and CPU; paid in the background while a spare page serves), reading the
    canvas's own pixels against a page screenshot, and the static pass per program
    (including the 156 KB `createCanvas(` input that stalled the old regex pass).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from proc_cpu import machine_busy_seconds, machine_stolen_seconds, tree_cpu_seconds  # noqa: E402

from renderer import RenderConfig, Renderer  # noqa: E402
from renderer.browser import CHROMIUM_FLAGS  # noqa: E402
from renderer.libserver import LibServer  # noqa: E402

SKETCHES = ROOT / "tests" / "sketches"


def variant(source: str, i: int) -> str:
    return source + f"\n// bench variant {i}\n"  # a new program hash: no cache anywhere


async def warm_medians(repeats: int) -> dict[str, float]:
    out = {}
    async with Renderer(RenderConfig(slots=1)) as r:
        await r.render((SKETCHES / "trivial.js").read_text())  # warm the caches
        for name in ("coral_hibiscus.js", "yellow_hibiscus.js", "empty.js", "trivial.js"):
            source = (SKETCHES / name).read_text()
            times = []
            for i in range(repeats):
                t = time.perf_counter()
                await r.render(variant(source, i), seed=i, skip_static=name == "empty.js")
                times.append(time.perf_counter() - t)
            out[name] = statistics.median(times)
    return out


async def cpu_per_render(repeats: int) -> tuple[float, float, float]:
    """CPU-seconds per reference render (process tree; whole machine), and renders/min,
    measured sequentially on one slot."""
    async with Renderer(RenderConfig(slots=1)) as r:
        await r.render((SKETCHES / "trivial.js").read_text())
        sources = [(SKETCHES / n).read_text() for n in ("coral_hibiscus.js", "yellow_hibiscus.js")]
        await asyncio.sleep(1)  # let the spare page settle before counting
        before, machine, t = (
            tree_cpu_seconds(os.getpid()),
            machine_busy_seconds(),
            time.perf_counter(),
        )
        n = 0
        for i in range(repeats):
            for s in sources:
                await r.render(variant(s, 100 + i), seed=i)
                n += 1
        await asyncio.sleep(1)  # the last page's replacement is part of a render's cost
        wall = time.perf_counter() - t - 1
        tree = (tree_cpu_seconds(os.getpid()) - before) / n
        return tree, (machine_busy_seconds() - machine) / n, n / wall * 60


async def pool_throughput(jobs: int, slots: int) -> tuple[float, float, float]:
    """Renders per minute with `slots` warm pages working on a queue, and the share of all
    cores that our processes, and the whole machine, kept busy meanwhile (our share below
    the machine's means someone else's load took the rest)."""
    sources = [(SKETCHES / n).read_text() for n in ("coral_hibiscus.js", "yellow_hibiscus.js")]
    cores = os.cpu_count() or 1
    async with Renderer(RenderConfig(slots=slots)) as r:
        await asyncio.gather(
            *(r.render((SKETCHES / "trivial.js").read_text(), seed=s) for s in range(slots))
        )
        await asyncio.sleep(1)
        ours, machine, t = (
            tree_cpu_seconds(os.getpid()),
            machine_busy_seconds(),
            time.perf_counter(),
        )
        await asyncio.gather(
            *(r.render(variant(sources[i % 2], 200 + i), seed=i) for i in range(jobs))
        )
        wall = time.perf_counter() - t
        ours = (tree_cpu_seconds(os.getpid()) - ours) / (wall * cores)
        return jobs / wall * 60, ours, (machine_busy_seconds() - machine) / (wall * cores)


async def rewrite_savings(repeats: int) -> dict[str, tuple[float, float, bool]]:
    """Per sketch: median seconds with the speed-up, without it, and whether every
    pair of renders gave the same PNG bytes. Renders alternate, so load hits both alike."""
    import renderer.libserver as libserver
    from renderer.brush_patches import deterministic_brush, gpu_like_masks

    def deterministic_only(library: str, *, env_pixels: bool = False) -> str:
        """The served p5.brush without the pigment-mix speed-up (masks as served)."""
        plain = deterministic_brush(library)
        return plain if env_pixels else gpu_like_masks(plain)

    served = libserver.served_brush
    out = {}
    async with contextlib.AsyncExitStack() as stack:
        fast = await stack.enter_async_context(Renderer(RenderConfig(slots=1)))
        libserver.served_brush = deterministic_only  # read once, as the second server starts
        try:
            plain = await stack.enter_async_context(Renderer(RenderConfig(slots=1)))
        finally:
            libserver.served_brush = served
        for r in (fast, plain):
            await r.render((SKETCHES / "trivial.js").read_text())
        for name in ("coral_hibiscus.js", "yellow_hibiscus.js"):
            source = (SKETCHES / name).read_text()
            times: dict[int, list[float]] = {0: [], 1: []}
            same = True
            for i in range(repeats):
                pngs = []
                for k, r in enumerate((fast, plain)):
                    await asyncio.sleep(0.5)  # the other renderer's spare page settles
                    t = time.perf_counter()
                    pngs.append((await r.render(variant(source, 300 + i), seed=i)).png)
                    times[k].append(time.perf_counter() - t)
                same = same and pngs[0] == pngs[1]
            out[name] = (statistics.median(times[0]), statistics.median(times[1]), same)
    return out


# A sketch without draw() is finished once setup (and p5.brush's flush after it) has run.
DRAWN = (
    "() => window.p5 && p5.instance && (p5.instance.frameCount >= 1 ||"
    " (typeof window.draw !== 'function' && p5.instance._setupDone))"
)


async def anchor_baseline(repeats: int) -> dict[str, float]:
    """The published style: a new browser and page per sketch, nothing kept warm."""
    from playwright.async_api import async_playwright

    out = {}
    server = LibServer()  # only to give the page an http origin, as a file:// page would have
    async with async_playwright() as pw:
        for name in ("coral_hibiscus.js", "yellow_hibiscus.js"):
            sketch = (SKETCHES / name).read_text()
            # A fresh browser has an empty cache, so fetching the libraries costs what
            # inlining them did. (Inlined, p5 2.x's global mode never reached its first frame.)
            html = (
                "<!doctype html><html><head><meta charset='utf-8'>"
                "<script src='/lib/p5.js'></script><script src='/lib/p5.brush.js'></script>"
                f"<script src='/anchor/{name}'></script></head>"
                "<body style='margin:0'></body></html>"
            )
            server.files[f"/anchor/{name}.html"] = (html.encode(), "text/html; charset=utf-8")
            server.files[f"/anchor/{name}"] = (sketch.encode(), "text/javascript; charset=utf-8")
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                browser = await pw.chromium.launch(
                    executable_path=RenderConfig().chromium,
                    args=list(CHROMIUM_FLAGS),
                    ignore_default_args=["--enable-gpu-rasterization"],
                )
                page = await browser.new_page(viewport={"width": 600, "height": 600})
                page.on("pageerror", lambda e: print("  anchor page error:", str(e)[:200]))
                await page.goto(f"{server.origin}/anchor/{name}.html", wait_until="load")
                await page.wait_for_function(DRAWN, polling=20, timeout=120_000)
                await page.screenshot(clip={"x": 0, "y": 0, "width": 600, "height": 600})
                await browser.close()
                times.append(time.perf_counter() - t)
            out[name] = statistics.median(times)
    server.close()
    return out


async def isolation_costs(repeats: int) -> dict[str, float]:
    """What the gate's hardening costs, measured piece by piece on a warm renderer."""
    from renderer.gate import static_check

    out: dict[str, float] = {}
    async with Renderer(RenderConfig(slots=1)) as r:
        pool = r.pool
        await r.render((SKETCHES / "trivial.js").read_text())
        await asyncio.sleep(1)  # let the background replacement page settle
        for label, fresh_context in (("fresh page", False), ("fresh context+page", True)):
            walls, cpus = [], []
            for _ in range(repeats):
                spare = await pool.take()  # a page whose context we reuse
                before = tree_cpu_seconds(os.getpid())
                t = time.perf_counter()
                slot = await pool._new_slot(None if fresh_context else spare.context)
                walls.append(time.perf_counter() - t)
                cpus.append(tree_cpu_seconds(os.getpid()) - before)
                await slot.page.close()
                if fresh_context:
                    await slot.context.close()
                pool.slots.put_nowait(spare)
                await asyncio.sleep(0.5)  # its renderer exits and is reaped before the next count
            out[f"{label} wall s"] = statistics.median(walls)
            out[f"{label} CPU s"] = statistics.median(cpus)
        slot = await pool.take()
        try:
            canvas = "() => document.querySelector('canvas') !== null"
            await slot.page.evaluate(
                "() => { const c = document.createElement('canvas'); c.width = 600; c.height = 600;"
                " document.body.appendChild(c); c.getContext('webgl2').clear(0); }"
            )
            assert await slot.page.evaluate(canvas)
            shots, reads = [], []
            for _ in range(repeats):
                t = time.perf_counter()
                await slot.page.screenshot(clip={"x": 0, "y": 0, "width": 600, "height": 600})
                shots.append(time.perf_counter() - t)
                t = time.perf_counter()
                await slot.page.evaluate(
                    "() => document.querySelector('canvas').toDataURL('image/png').length"
                )
                reads.append(time.perf_counter() - t)
            out["page screenshot s"] = statistics.median(shots)
            out["canvas toDataURL s"] = statistics.median(reads)
        finally:
            pool.give_back(slot)
    coral = (SKETCHES / "coral_hibiscus.js").read_text()
    static_check(coral)  # start the worker
    for label, source in (
        ("static pass, coral s", coral),
        ("static pass, 156 KB s", "createCanvas(" * 12_000),
    ):
        t = time.perf_counter()
        for _ in range(repeats):
            static_check(source)
        out[label] = (time.perf_counter() - t) / repeats
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=12, help="renders in the throughput run")
    parser.add_argument(
        "--ray", action="store_true", help="only: throughput on Ray Serve, 1 and 2 replicas"
    )
    parser.add_argument(
        "--env-renderer", type=Path, metavar="PATH", help="the env's core/render.py, side by side"
    )
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    print(f"machine: {cores} cores, load average {load:.2f} at start")
    stolen, started = machine_stolen_seconds(), time.perf_counter()
    if args.ray:
        from render_ray import ray_throughput

        print(f"\nthroughput through one HTTP endpoint on Ray Serve ({args.jobs} renders)")
        await asyncio.to_thread(ray_throughput, args.jobs)
        print(f"load average at end {os.getloadavg()[0]:.2f}")
        return

    warm = await warm_medians(args.repeats)
    ref_median = statistics.median([warm["coral_hibiscus.js"], warm["yellow_hibiscus.js"]])
    print("\nwarm median per render (one slot; a fresh page per job, a spare kept ready)")
    for name, t in warm.items():
        goal = "   (goal <= 2 s at rest)" if name == "coral_hibiscus.js" else ""
        print(f"  {name:22s} {t:6.2f} s{goal}")
    print(f"  reference median       {ref_median:6.2f} s   (goal <= 3 s)")
    print(f"  harness overhead       {warm['empty.js']:6.3f} s   (empty.js; goal <= 0.15 s)")

    cpu, machine_cpu, one_slot = await cpu_per_render(max(2, args.repeats // 2))
    floor = cores * 60 / cpu
    throughput, ours, busy = await pool_throughput(args.jobs, slots=max(1, min(2, cores)))
    print("\nthroughput (coral + yellow alternating)")
    print(f"  CPU-seconds per render {cpu:6.2f}   (this process tree, exited renderers included)")
    print(f"  machine busy per render{machine_cpu:6.2f}   (all processes: honest only at rest)")
    print(f"  CPU floor              {floor:6.1f} renders/min ({cores} cores x 60 / CPU-s)")
    print(f"  one slot, in sequence  {one_slot:6.1f} renders/min")
    print(
        f"  pool of 2 slots        {throughput:6.1f} renders/min = {throughput / floor:.2f} of the floor (goal >= 0.85)"
    )
    print(f"  cores busy meanwhile   {ours:6.0%} ours, {busy:.0%} the whole machine")

    savings = await rewrite_savings(args.repeats)
    print("\nthe exact pigment-mix speed-up (renderer/brush_patches.py; alternating, same run)")
    for name, (with_, without, same) in savings.items():
        print(
            f"  {name:22s} {with_:6.2f} s with, {without:6.2f} s without = {with_ / without:.2f}x"
            f"   ({'same' if same else 'DIFFERENT'} PNG bytes)"
        )

    costs = await isolation_costs(args.repeats)
    print("\ncost of isolation and the AST gate (same run)")
    for label, value in costs.items():
        print(f"  {label:24s} {value:7.3f}")

    if args.env_renderer:
        from render_ray import env_renderer_side_by_side

        print("\nthe env's own SketchRenderer, same sketches (median per render)")
        await asyncio.to_thread(env_renderer_side_by_side, args.env_renderer, warm, args.repeats)

    anchor = await anchor_baseline(max(1, args.repeats // 2))
    print("\nanchor-style baseline (fresh browser + page per render)")
    for name, t in anchor.items():
        print(f"  {name:22s} {t:6.2f} s   = {t / warm[name]:.2f}x our warm render")
    end_load = os.getloadavg()[0]
    steal = (machine_stolen_seconds() - stolen) / ((time.perf_counter() - started) * cores)
    print(
        f"\nload average at end {end_load:.2f}; the host took {steal:.0%} of the cores (steal)"
        " meanwhile. Figures on a loaded or shared machine are slower: compare the ratios."
    )


if __name__ == "__main__":
    asyncio.run(main())
