"""`bench/render.py --ray` and `--env-renderer PATH`: the service on Ray, the env's renderer.

Both print figures and assert nothing.
"""

from __future__ import annotations

import asyncio
import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKETCHES = ROOT / "tests" / "sketches"
REFERENCES = ("coral_hibiscus.js", "yellow_hibiscus.js")


def variant(source: str, i: int) -> str:
    return source + f"\n// ray bench variant {i} {time.time_ns()}\n"  # no cache answers it


async def _throughput(url: str, jobs: int, warm: int) -> float:
    from renderer.client import RenderClient

    client = RenderClient(url, timeout_s=600)
    trivial = (SKETCHES / "trivial.js").read_text()
    await asyncio.gather(*(client.render(variant(trivial, i)) for i in range(warm)))
    sources = [(SKETCHES / n).read_text() for n in REFERENCES]
    started = time.perf_counter()
    results = await asyncio.gather(
        *(client.render(variant(sources[i % 2], i), seed=i) for i in range(jobs))
    )
    elapsed = time.perf_counter() - started
    failed = [r.infra_error for r in results if r.infra_error]
    if failed:  # a failure is fast: counting it would flatter the figure
        print(f"  ({len(failed)} infrastructure failures, not counted: {failed[0]})")
    return (jobs - len(failed)) / elapsed * 60


def ray_throughput(jobs: int) -> None:
    """Renders per minute through one endpoint with 1, then 2 replicas of one slot each."""
    from ray import serve

    from renderer import RenderConfig
    from renderer.ray_serve import APP_NAME, deploy, free_port, start_local_cluster

    start_local_cluster()
    port = free_port("127.0.0.1")  # Serve's proxy keeps the port it started on
    try:
        figures = {}
        for replicas in (1, 2):
            url = deploy(RenderConfig(slots=1, deadline_s=300), replicas, "127.0.0.1", port, jobs)
            figures[replicas] = asyncio.run(_throughput(url, jobs, warm=2 * replicas))
            print(f"  {replicas} replica(s) x 1 slot   {figures[replicas]:6.1f} renders/min")
            serve.delete(APP_NAME)
        print(f"  2 replicas / 1 replica  {figures[2] / figures[1]:6.2f}x   (goal >= 1.6x)")
    finally:
        serve.shutdown()
        import ray

        ray.shutdown()


def env_renderer_side_by_side(path: Path, ours: dict[str, float], repeats: int) -> None:
    """The env's own SketchRenderer (its core/render.py at PATH) on the reference sketches."""
    spec = importlib.util.spec_from_file_location("env_render", path)
    if spec is None or spec.loader is None:
        print(f"  cannot load {path}")
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["env_render"] = module
    spec.loader.exec_module(module)

    async def run() -> dict[str, float]:
        renderer = module.SketchRenderer(pool_size=1)
        out = {}
        try:
            for name in REFERENCES:
                source = (SKETCHES / name).read_text()
                times = []
                for i in range(repeats):
                    t = time.perf_counter()
                    await renderer.render(variant(source, i), seed=i)
                    times.append(time.perf_counter() - t)
                out[name] = statistics.median(times)
        finally:
            await renderer.close()
        return out

    for name, seconds in asyncio.run(run()).items():
        mine = ours.get(name)
        ratio = f"= {seconds / mine:.1f}x ours ({mine:.2f} s)" if mine else ""
        print(f"  {name:22s} {seconds:6.2f} s   {ratio}")
    # Where its time goes: p5.brush's fill masks are 2D canvases, which its flags rasterise
    # on SwiftShader. Its code unchanged, only that one flag added to its launch arguments.
    module.CHROMIUM_ARGS.append("--disable-accelerated-2d-canvas")
    print("  the same, its 2D canvases in software (--disable-accelerated-2d-canvas added):")
    for name, seconds in asyncio.run(run()).items():
        mine = ours.get(name)
        ratio = f"= {seconds / mine:.1f}x ours" if mine else ""
        print(f"  {name:22s} {seconds:6.2f} s   {ratio}")
