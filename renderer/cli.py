"""CLI: `refpool render` and `refpool serve-renderer` (thin shells over the renderer).

This is the renderer's one module that touches the store: it keeps rendered PNGs and the
render log in $REFPOOL_HOME like every other command. The renderer itself never does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from refpool.core.defaults import ENV_GATE_PROFILE, GATE_PROFILE
from refpool.core.text import repair_data
from renderer.engine import RenderConfig

if TYPE_CHECKING:
    from refpool.core.store import Store
    from renderer.files import FileRender


# -- refpool render / serve-renderer --------------------------------------------------------
ENV_PIXELS_HELP = (
    "paint 2D canvases on SwiftShader as the watercolour env does: its exact pixels, ~17x slower"
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "render",
        help="gate and render p5.brush programs in one warm browser",
        description="Render .js files (or model replies with a ```js block). Exit status: "
        "0 all accepted, 1 any rejected, 3 our infrastructure failed.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="sketch files to render")
    p.add_argument("--out-dir", type=Path, help="also write each PNG here as <file stem>.png")
    p.add_argument("--seed", type=int, default=0, help="render seed")
    p.add_argument(
        "--profile",
        default=GATE_PROFILE,
        help="gate profile: reference (the prompt's 10 brush methods, for building a pool),"
        " env (what the watercolour env's gate accepts) or permissive",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per file on stdout")
    p.add_argument("--slots", type=int, default=None, help="warm pages to render in parallel")
    p.add_argument("--no-cache", action="store_true", help="render even if a cached result exists")
    p.add_argument(
        "--deadline",
        type=float,
        default=None,
        help="seconds the sketch's own code may take to record its calls (its `timeout`);"
        " replaying them has a budget of its own, and running past it is never the sketch's"
        f" fault (default: {RenderConfig.deadline_s:g})",
    )
    p.add_argument(
        "--env-pixels",
        action="store_true",
        help=ENV_PIXELS_HELP,
    )
    p.set_defaults(func=_render)

    s = sub.add_parser(
        "serve-renderer",
        help="serve the renderer over HTTP for an RL environment",
        description="POST /render with {source, seed, profile}; GET /healthz, GET /metrics. "
        "Loopback only by default. SIGTERM finishes the renders in flight, then stops.",
    )
    s.add_argument("--port", type=int, default=8765, help="port; 0 picks any free one")
    s.add_argument("--host", default="127.0.0.1", help="interface")
    s.add_argument(
        "--slots", type=int, default=None, help="warm pages (default: by core count; 1 per replica)"
    )
    s.add_argument(
        "--profile",
        default=ENV_GATE_PROFILE,
        help="gate profile of requests that name none (default env: what the watercolour env's"
        " gate accepts; reference is the stricter pool-building allowlist)",
    )
    s.add_argument(
        "--queue", type=int, default=8, help="renders admitted beyond the slots; more get a 503"
    )
    s.add_argument(
        "--deadline",
        type=float,
        default=RenderConfig.deadline_s,
        help="seconds the sketch's own code may take to record its calls (its `timeout`)",
    )
    s.add_argument("--no-cache", action="store_true", help="render even if a cached result exists")
    s.add_argument(
        "--env-pixels",
        action="store_true",
        help=ENV_PIXELS_HELP,
    )
    s.add_argument("--ray", action="store_true", help="serve replicas on Ray Serve")
    s.add_argument("--replicas", type=int, default=2, help="with --ray: replicas")
    s.add_argument(
        "--ray-address", default=None, help="with --ray: an existing cluster (default: a local one)"
    )
    s.set_defaults(func=_serve_renderer)


def _render(args: argparse.Namespace) -> int:
    import asyncio

    from refpool.core.errors import InputError
    from refpool.core.store import Store
    from renderer.browser import default_slots
    from renderer.profiles import get_profile

    get_profile(args.profile)  # a wrong name is refused before any work starts
    if args.deadline is not None and not args.deadline > 0:
        raise InputError("--deadline must be a positive number of seconds")
    store = Store.open()
    config = RenderConfig(
        profile=args.profile,
        slots=args.slots or default_slots(),
        cache_dir=None if args.no_cache else store.home / "render-cache",
        env_pixels=args.env_pixels,
    )
    if args.deadline is not None:
        config.deadline_s = args.deadline
    # A terminal that cannot show a character gets a replacement, never a traceback.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    if args.out_dir:
        args.out_dir.mkdir(parents=True, exist_ok=True)
    rows = asyncio.run(_render_and_keep(args, config, store))  # InfraError: exit 3, via main
    accepted = sum(r["accepted"] for r in rows)
    infra = sum(1 for r in rows if r["infra_error"])
    if not args.json:
        for row in rows:
            print(_text_line(row))
        rejected = len(rows) - accepted - infra
        print(
            f"{len(rows)} rendered: {accepted} accepted, {rejected} rejected, "
            f"{infra} infrastructure failures",
            file=sys.stderr,
        )
    if infra:
        return 3
    return 0 if accepted == len(rows) else 1


async def _render_and_keep(
    args: argparse.Namespace, config: RenderConfig, store: Store
) -> list[dict[str, Any]]:
    """Render the files, keeping each in the store (and --out-dir) as it finishes.

    With --json each row is printed as soon as it is ready; the rows come back in the order
    the files were given.
    """
    from renderer import Renderer
    from renderer.files import render_files

    rows: list[dict[str, Any]] = [{} for _ in args.files]
    bar = None
    if not args.json:
        from tqdm import tqdm

        bar = tqdm(total=len(args.files), desc="render", unit="sketch", file=sys.stderr)
    async with Renderer(config) as renderer:
        async for done in render_files(renderer, args.files, seed=args.seed):
            rows[done.index] = row = _row(done, _keep(done, store, args.out_dir))
            if args.json:
                print(json.dumps(row), flush=True)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return rows


def _keep(done: FileRender, store: Store, out_dir: Path | None) -> Path | None:
    """Store the PNG, program and render log; the PNG's path (in --out-dir if given)."""
    result = done.render
    if result is None or done.source is None:
        return None
    png_path = None
    if result.png:
        png_path = store.png_path(store.put_png(result.png))
        if out_dir:
            png_path = out_dir / f"{done.path.stem}.png"
            png_path.write_bytes(result.png)
    if not result.infra_error:  # our own failures say nothing about the program
        store.put_program(done.source)
        store.record_render(result)
    return png_path


def _row(done: FileRender, png_path: Path | None) -> dict[str, Any]:
    """The --json line for one file (a frozen contract: other tools read these keys)."""
    return repair_data(_raw_row(done, png_path))  # file names and messages come from outside


def _raw_row(done: FileRender, png_path: Path | None) -> dict[str, Any]:
    result = done.render
    if result is None:
        if done.failed:  # our static pass broke on this file: a row, and exit status 3
            why = {"code": "static_pass_failed", "message": done.failed, "line": None}
        else:
            why = {"code": "unreadable", "message": done.unreadable, "line": None}
        return {
            "file": done.file,
            "accepted": False,
            "violations": [why],
            "coverage": None,
            "png": None,
            "render_ms": 0.0,
            "queued_ms": 0.0,
            "infra_error": done.failed,
        }
    return {
        "file": done.file,
        "accepted": result.accepted,
        "violations": [v.to_dict() for v in result.gate.violations],
        "coverage": result.gate.coverage,
        "png": str(png_path) if png_path else None,
        "render_ms": round(result.render_ms, 1),  # time on a renderer slot
        "queued_ms": round(result.queued_ms, 1),  # time waiting for a free slot
        "infra_error": result.infra_error,
        "cached": result.cached,
    }


def _text_line(row: dict[str, Any]) -> str:
    status = "ok      " if row["accepted"] else ("INFRA   " if row["infra_error"] else "rejected")
    why = "; ".join(
        f"{v['code']}: {v['message']}" + (f" (line {v['line']})" if v.get("line") else "")
        for v in row["violations"]
    ) or (row["infra_error"] or "")
    cov = f"coverage {row['coverage']:.3f}" if row["coverage"] is not None else ""
    seconds = row["render_ms"] / 1000
    return f"{status} {row['file']}  {seconds:.2f}s {cov} {row['png'] or ''} {why}".rstrip()


def _serve_renderer(args: argparse.Namespace) -> int:
    from refpool.core.errors import InputError
    from refpool.core.store import Store
    from renderer.browser import default_slots
    from renderer.service import Limits, LocalBackend, serve

    if args.queue < 0 or (args.slots is not None and args.slots < 1) or args.replicas < 1:
        raise InputError("the queue must be 0 or more, and slots and replicas 1 or more")
    if args.deadline <= 0:
        raise InputError("the deadline must be a positive number of seconds")
    cache_dir = None if args.no_cache else Store.open().home / "render-cache"
    slots = args.slots or (1 if args.ray else default_slots())
    config = RenderConfig(
        profile=args.profile,
        slots=slots,
        cache_dir=cache_dir,
        deadline_s=args.deadline,
        env_pixels=args.env_pixels,
    )
    drain_s = config.deadline_s * config.attempts + 10  # the longest a render in flight takes
    if args.ray:
        from renderer.ray_serve import serve_on_ray

        return serve_on_ray(
            config,
            replicas=args.replicas,
            address=args.ray_address,
            host=args.host,
            port=args.port,
            limits=Limits(queue=args.queue),
        )
    serve(LocalBackend(config), args.host, args.port, Limits(queue=args.queue), drain_s)
    return 0
