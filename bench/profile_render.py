"""Where one render's time and CPU go: prints a breakdown, asserts nothing.

    .venv/bin/python bench/profile_render.py [--sketch coral_hibiscus.js] [--seed 0] [--runs 3]

For each run, on a warm renderer (one slot, a fresh page per job as in production):
  * the page's own phases, from the harness's `rp:` performance marks (parse, worker,
    loading p5.brush, setup, each frame, reading the canvas), in wall milliseconds;
  * CPU-seconds per Chromium process type and per thread name (main thread, worker,
    compositor, the GPU process's SwiftShader threads...), from /proc, while the job ran;
  * the JS functions that took the page's main thread the longest (CDP Profiler);
  * with --trace, a Chrome trace's own time per event on the page's and the GPU process's
    main threads (2D canvas drawing, waiting for the GPU process, ANGLE's submits...);
  * what the replacement page costs (wall and CPU), paid after the job.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from proc_cpu import TICK, descendants, process_cpu_seconds, stat_fields  # noqa: E402

from renderer import RenderConfig, Renderer  # noqa: E402
from renderer.browser import Slot  # noqa: E402

SKETCHES = ROOT / "tests" / "sketches"


def _kind(pid: int) -> str:
    """Chromium's process type (browser, renderer, gpu-process, utility:network...)."""
    try:
        args = (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return "?"
    # Chromium rewrites its argv into one string, so match flags anywhere in it.
    if sub := re.search(r"--utility-sub-type=([\w.]+)", args):
        return "utility:" + sub.group(1).split(".")[0]
    if kind := re.search(r"--type=([\w-]+)", args):
        return kind.group(1)
    return "browser" if "chromium" in args.split(" ", 1)[0] else Path(args.split(" ", 1)[0]).name


def cpu_snapshot(root: int) -> dict[str, Any]:
    """Per process (with its reaped children) and per thread CPU-seconds under `root`."""
    procs: dict[int, tuple[str, float]] = {}
    threads: dict[tuple[int, int], tuple[str, str, float]] = {}
    for pid in descendants(root):
        kind = _kind(pid)
        procs[pid] = (kind, process_cpu_seconds(pid))
        for tid in os.listdir(f"/proc/{pid}/task") if Path(f"/proc/{pid}/task").exists() else []:
            tstat = stat_fields(f"/proc/{pid}/task/{tid}/stat")
            try:
                comm = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            except OSError:
                continue
            if tstat:
                threads[(pid, int(tid))] = (kind, comm, (int(tstat[11]) + int(tstat[12])) / TICK)
    return {"procs": procs, "threads": threads}


def cpu_delta(before: dict[str, Any], after: dict[str, Any]) -> tuple[dict[str, float], dict]:
    by_kind: dict[str, float] = collections.defaultdict(float)
    for pid, (kind, t) in after["procs"].items():
        by_kind[kind] += t - before["procs"].get(pid, (kind, 0.0))[1]
    for pid, (kind, _t) in before["procs"].items():
        if pid not in after["procs"]:
            by_kind[kind + " (exited)"] += 0.0  # its CPU shows up in its parent's cutime
    by_thread: dict[tuple[str, str], float] = collections.defaultdict(float)
    for key, (kind, comm, t) in after["threads"].items():
        old = before["threads"].get(key)
        # Thread names with a number (ThreadPoolForegr..., swiftshader-N) are grouped.
        name = comm.rstrip("0123456789")
        by_thread[(kind, name)] += t - (old[2] if old else 0.0)
    return dict(by_kind), dict(by_thread)


def marks_table(marks: list[dict[str, Any]]) -> list[tuple[str, float, float]]:
    """(mark, ms since the job started, ms since the previous mark)."""
    marks = sorted(marks, key=lambda m: m["startTime"])
    start = next((m["startTime"] for m in marks if m["name"] == "rp:run"), None)
    if start is None:
        return []
    rows, prev = [], start
    for m in marks:
        if m["startTime"] < start:
            continue
        rows.append((m["name"], m["startTime"] - start, m["startTime"] - prev))
        prev = m["startTime"]
    return rows


def hot_functions(profile: dict[str, Any], top: int) -> list[tuple[float, str]]:
    """Self time per function (ms) from a CDP Profiler profile."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    deltas = profile.get("timeDeltas") or []
    self_ms: dict[str, float] = collections.defaultdict(float)
    for sample, delta in zip(profile.get("samples") or [], deltas[1:] + [0], strict=False):
        frame = nodes[sample]["callFrame"]
        url = frame.get("url", "").rsplit("/", 1)[-1]
        label = (
            f"{frame.get('functionName') or '(anonymous)'} {url}:{frame.get('lineNumber', 0) + 1}"
        )
        self_ms[label] += delta / 1000
    return sorted(((ms, label) for label, ms in self_ms.items()), reverse=True)[:top]


TRACE_CATEGORIES = [
    "blink",
    "gpu",
    "gpu.angle",
    "toplevel",
    "v8",
    "disabled-by-default-gpu.service",
]
TRACED_THREADS = ("CrRendererMain", "CrGpuMain")  # the page's main thread, the GPU process's


def trace_self_times(events: list[dict[str, Any]]) -> dict[str, list[tuple[str, float, float]]]:
    """Per main thread: (event, self wall ms, self CPU ms), largest wall first.

    Self time is an event's time minus its children's, so "WaitForGetOffset" is the page
    waiting for the GPU process, "FinalizeFrame" drawing a 2D canvas, "v8.callFunction" JS.
    """
    names = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    per_thread: dict[tuple[int, int], list[dict[str, Any]]] = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and names.get((e["pid"], e["tid"])) in TRACED_THREADS:
            per_thread[(e["pid"], e["tid"])].append(e)
    out: dict[str, list[tuple[str, float, float]]] = {}
    for key, spans in per_thread.items():
        spans.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
        wall: dict[str, float] = collections.defaultdict(float)
        cpu: dict[str, float] = collections.defaultdict(float)
        stack: list[dict[str, Any]] = []
        for e in spans:
            while stack and stack[-1]["ts"] + stack[-1].get("dur", 0) <= e["ts"]:
                stack.pop()
            if stack:  # a child: its time is not its parent's own
                wall[stack[-1]["name"]] -= e.get("dur", 0)
                cpu[stack[-1]["name"]] -= e.get("tdur", 0)
            wall[e["name"]] += e.get("dur", 0)
            cpu[e["name"]] += e.get("tdur", 0)
            stack.append(e)
        rows = sorted(((n, wall[n] / 1000, cpu[n] / 1000) for n in wall), key=lambda r: -r[1])
        label = names[key]
        if label not in out or sum(r[1] for r in rows) > sum(r[1] for r in out[label]):
            out[label] = rows  # the busiest process of that kind: the job's page
    return out


async def start_trace(r: Renderer) -> tuple[Any, list[dict[str, Any]], asyncio.Event]:
    session = await r.pool.browser.new_browser_cdp_session()
    events: list[dict[str, Any]] = []
    done = asyncio.Event()
    session.on("Tracing.dataCollected", lambda p: events.extend(p["value"]))
    session.on("Tracing.tracingComplete", lambda p: done.set())
    config = {"includedCategories": TRACE_CATEGORIES}
    await session.send("Tracing.start", {"traceConfig": config, "transferMode": "ReportEvents"})
    return session, events, done


async def profile_once(r: Renderer, source: str, seed: int, top: int, trace: bool) -> None:
    pool = r.pool
    root = os.getpid()
    used: list[Slot] = []
    real_give_back = pool.give_back
    pool.give_back = used.append  # type: ignore[method-assign]  # keep the page open to read it
    slot = await pool.take()
    cdp = await slot.context.new_cdp_session(slot.page)
    await cdp.send("Profiler.enable")
    await cdp.send("Profiler.setSamplingInterval", {"interval": 500})
    await cdp.send("Profiler.start")
    tracing = await start_trace(r) if trace else None
    before = cpu_snapshot(root)
    t = time.perf_counter()
    try:
        await r._run_on(pool, slot, source, seed, r.profile, r.config.deadline_s, True)
    finally:
        pool.give_back = real_give_back  # type: ignore[method-assign]
    wall = time.perf_counter() - t
    after = cpu_snapshot(root)
    if tracing is not None:
        session, events, done = tracing
        await session.send("Tracing.end")
        await done.wait()
        await session.detach()
    marks = await slot.page.evaluate(
        "() => performance.getEntriesByType('mark').map((m) => ({name: m.name,"
        " startTime: m.startTime}))"
    )
    js = (await cdp.send("Profiler.stop"))["profile"]
    await cdp.detach()
    by_kind, by_thread = cpu_delta(before, after)
    print(f"\njob wall {wall * 1000:7.0f} ms, CPU {sum(by_kind.values()):5.2f} s (all processes)")
    print("  page phases (ms since run() / since the previous mark)")
    for name, at, step in marks_table(marks):
        print(f"    {name:26s} {at:8.1f} {step:8.1f}")
    print("  CPU-s by process type")
    for kind, secs in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        if secs >= 0.005:
            print(f"    {kind:34s} {secs:6.2f}")
    print("  CPU-s by thread (process type / thread name)")
    for (kind, name), secs in sorted(by_thread.items(), key=lambda kv: -kv[1])[:12]:
        if secs >= 0.005:
            print(f"    {kind + ' / ' + name:44s} {secs:6.2f}")
    print(f"  page main thread, top {top} functions by self time (ms)")
    for ms, label in hot_functions(js, top):
        print(f"    {ms:8.1f}  {label[:90]}")
    if tracing is not None:
        for thread, rows in trace_self_times(events).items():
            print(f"  trace, {thread}: top events by own wall time (ms wall / ms CPU)")
            for name, ms, cpu_ms in rows[:top]:
                print(f"    {ms:8.1f} {cpu_ms:8.1f}  {name[:70]}")
    # The page is used; what its replacement costs (paid off the job's critical path).
    before = cpu_snapshot(root)
    t = time.perf_counter()
    for used_slot in used:
        real_give_back(used_slot)
    while pool.slots.qsize() < pool.slot_count + 1:
        await asyncio.sleep(0.01)
    fresh_wall = time.perf_counter() - t
    by_kind, _ = cpu_delta(before, cpu_snapshot(root))
    by_kind.pop("zygote", None)  # it reaped the used page's renderer: the job's CPU, not this
    print(
        f"  replacement page: wall {fresh_wall * 1000:.0f} ms, CPU {sum(by_kind.values()):.2f} s"
        " (" + ", ".join(f"{k} {v:.2f}" for k, v in by_kind.items() if v >= 0.01) + ")"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sketch", default="coral_hibiscus.js")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--trace", action="store_true", help="also a Chrome trace of each job")
    args = parser.parse_args()
    source = (SKETCHES / args.sketch).read_text()
    print(f"{args.sketch} seed {args.seed}; load average {os.getloadavg()[0]:.2f}")
    async with Renderer(RenderConfig(slots=1)) as r:
        await r.render(source, seed=args.seed + 1)  # warm: HTTP and code caches, GPU process
        await asyncio.sleep(0.5)
        for _ in range(args.runs):
            await profile_once(r, source, args.seed, args.top, args.trace)
    print(f"\nload average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
