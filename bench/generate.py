"""Benchmark generation (prints figures; not a test).

1. Procedural: candidates per minute over the three sample photos, 3 rounds.
2. A loopback model answering after a set latency: is the batch's wall time close to
   max(total model latency / concurrency, total render time), rather than their sum?

    .venv/bin/python bench/generate.py [--candidates 2] [--latency 4] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generators.analysis import analyse_path  # noqa: E402
from generators.batch import generate_async  # noqa: E402
from generators.loopback import LoopbackOpenAI, models_file  # noqa: E402
from generators.procedural import generate_program  # noqa: E402
from generators.summary import format_summary  # noqa: E402
from refpool.core.defaults import ROUNDS  # noqa: E402
from refpool.core.store import Store  # noqa: E402
from refpool.intake.photos import import_folder  # noqa: E402
from renderer import RenderConfig, Renderer  # noqa: E402

QUEUED_MS: list[float] = []  # per render: time spent waiting for a free slot (last run)


async def run(store: Store, slots: int, **kw) -> tuple[dict, float]:
    async with Renderer(RenderConfig(slots=slots)) as renderer:
        QUEUED_MS.clear()
        render = renderer.render

        async def counted(*args, **kwargs):  # render_ms is time on a slot; queueing apart
            result = await render(*args, **kwargs)
            QUEUED_MS.append(result.queued_ms)
            return result

        renderer.render = counted  # type: ignore[method-assign]
        started = time.monotonic()
        summary = await generate_async(store, renderer=renderer, progress=True, **kw)
        return summary, time.monotonic() - started


def fresh_store(tag: str) -> Store:
    home = Path(tempfile.mkdtemp(prefix=f"refpool-bench-{tag}-"))
    os.environ["REFPOOL_HOME"] = str(home)
    store = Store(home)
    import_folder(store, ROOT / "refpool" / "intake" / "samples")
    return store


def render_seconds(store: Store) -> float:
    return (store.query("SELECT COALESCE(SUM(render_ms), 0) AS ms FROM renders")[0]["ms"]) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=2, help="per photo (default 2)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds (default {ROUNDS})")
    parser.add_argument("--latency", type=float, default=4.0, help="loopback model latency, s")
    parser.add_argument(
        "--concurrency", type=int, default=4, help="chains / model requests in flight"
    )
    parser.add_argument("--slots", type=int, default=2, help="renderer slots (default 2)")
    args = parser.parse_args()

    # 1. procedural, no model
    store = fresh_store("procedural")
    summary, wall = asyncio.run(
        run(
            store,
            args.slots,
            candidates=args.candidates,
            rounds=args.rounds,
            concurrency=args.concurrency,
        )
    )
    print(format_summary(summary))
    n = summary["models"]["procedural"]["candidates"]
    renders = render_seconds(store)
    print(
        f"\nprocedural: {n} candidates in {wall:.1f} s = {n / wall * 60:.1f} candidates/min"
        f" ({args.rounds} rounds, {args.slots} render slots; render time {renders:.1f} s in total"
        f" on the slots, plus {sum(QUEUED_MS) / 1000:.1f} s queued for a slot)"
    )

    # 2. a loopback model: first answering instantly (the batch is then render-bound, and its
    # wall time is the honest "total render time" with the renderer's slots in parallel), then
    # after a fixed latency. Overlap means the second wall time stays near the larger of the two.
    base_wall, _, base_renders = loopback_run(args, 0.0)
    wall, model_s, renders = loopback_run(args, args.latency)
    model_k = model_s / args.concurrency
    ideal = max(model_k, base_wall)
    serial = model_k + base_wall
    print(
        f"\nloopback model ({args.latency:g} s per call, concurrency {args.concurrency},"
        f" {args.slots} render slots, {args.candidates} candidates x 3 photos x {args.rounds} rounds):\n"
        f"  render-bound wall (instant replies): {base_wall:.1f} s"
        f" (sum of per-render times {base_renders:.1f} s)\n"
        f"  with latency: wall {wall:.1f} s; model latency {model_s:.1f} s total"
        f" = {model_k:.1f} s / concurrency\n"
        f"  wall / max(model/K, render) = {wall / ideal:.2f}   (1.0 = perfect overlap)\n"
        f"  wall / (model/K + render)   = {wall / serial:.2f}   (1.0 = no overlap at all)"
    )


def loopback_run(args, latency: float) -> tuple[float, float, float]:
    """(wall s, total model latency s, sum of render times s) for one loopback batch."""
    store = fresh_store(f"loopback{latency:g}")
    sample = analyse_path(
        str(ROOT / "refpool" / "intake" / "samples" / "dahlia_vultilion_6056698931.jpg")
    )
    counter = iter(range(10**6))

    def reply(body: dict) -> dict:
        source = generate_program(sample, next(counter) % 18, "flower")
        return {"delay": latency, "content": f"Plan: layered petals.\n```js\n{source}```"}

    with LoopbackOpenAI(default=reply) as server:
        path = models_file(
            Path(store.home) / "models.json", server.base_url, concurrency=args.concurrency
        )
        summary, wall = asyncio.run(
            run(
                store,
                args.slots,
                generators=("loopback",),
                candidates=args.candidates,
                rounds=args.rounds,
                concurrency=args.concurrency,
                models_file=path,
            )
        )
    print(format_summary(summary))
    model_s = store.query("SELECT SUM(latency_ms) AS ms FROM model_calls")[0]["ms"] / 1000
    return wall, model_s, render_seconds(store)


if __name__ == "__main__":
    main()
