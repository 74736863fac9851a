"""CLI: `refpool render` and `refpool serve-renderer` (thin shells over the renderer).

This is the renderer's one module that touches the store: it keeps rendered PNGs and the
render log in $REFPOOL_HOME like every other command. The renderer itself never does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


# -- refpool render / serve-renderer --------------------------------------------------------
def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "render",
        help="gate and render p5.brush programs in one warm browser",
        description="Render .js files (or model replies with a ```js block). Exit status: "
        "0 all accepted, 1 any rejected, 3 our infrastructure failed.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="sketch files to render")
    p.add_argument("--out-dir", type=Path, help="also write each PNG here as <file stem>.png")
    p.add_argument("--seed", type=int, default=0, help="render seed (default 0)")
    p.add_argument("--profile", default="reference", help="gate profile: reference or permissive")
    p.add_argument("--json", action="store_true", help="one JSON object per file on stdout")
    p.add_argument("--slots", type=int, default=None, help="warm pages to render in parallel")
    p.add_argument("--no-cache", action="store_true", help="render even if a cached result exists")
    p.set_defaults(func=_render)

    s = sub.add_parser(
        "serve-renderer",
        help="serve the renderer over HTTP for an RL environment",
        description="POST /render with {source, seed, profile}; GET /health. Loopback only by default.",
    )
    s.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    s.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    s.add_argument("--slots", type=int, default=None, help="warm pages (default: by core count)")
    s.add_argument("--profile", default="reference", help="default gate profile")
    s.set_defaults(func=_serve_renderer)


def _read_program(path: Path) -> tuple[str | None, str | None]:
    """(source, error). Model replies are unwrapped from their ```js block."""
    from renderer import extract_program

    if not path.is_file():
        return None, f"file not found: {path}"
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, f"{path} is not UTF-8 text (binary file?); pass a .js sketch"
    if "\x00" in text:
        return None, f"{path} contains NUL bytes (binary file?); pass a .js sketch"
    if "```" in text:
        return extract_program(text) or "", None
    return text, None


def _render(args: argparse.Namespace) -> int:
    import asyncio

    from refpool.store import Store
    from renderer import RenderConfig, Renderer
    from renderer.engine import InfraError, default_slots

    store = Store.open()
    config = RenderConfig(
        profile=args.profile,
        slots=args.slots or default_slots(),
        cache_dir=None if args.no_cache else store.home / "render-cache",
    )
    if args.out_dir:
        args.out_dir.mkdir(parents=True, exist_ok=True)

    async def run() -> list[dict]:
        rows: list[dict] = []
        bar = None
        if not args.json:
            from tqdm import tqdm

            bar = tqdm(total=len(args.files), desc="render", unit="sketch", file=sys.stderr)
        async with Renderer(config) as renderer:

            async def one(name: str) -> dict:
                path = Path(name)
                source, error = _read_program(path)
                if error:
                    row = {"file": name, "accepted": False, "violations": [
                        {"code": "unreadable", "message": error, "line": None}], "coverage": None,
                        "png": None, "render_ms": 0.0, "infra_error": None}  # fmt: skip
                else:
                    result = await renderer.render(source, seed=args.seed)
                    png_path = None
                    if result.png:
                        png_sha = store.put_png(result.png)
                        png_path = store.png_path(png_sha)
                        if args.out_dir:
                            png_path = args.out_dir / f"{path.stem}.png"
                            png_path.write_bytes(result.png)
                    if not result.infra_error:
                        store.put_program(source)
                        store.record_render(result)
                    row = {"file": name, "accepted": result.accepted,
                           "violations": [v.to_dict() for v in result.gate.violations],
                           "coverage": result.gate.coverage, "png": str(png_path) if png_path else None,
                           "render_ms": round(result.render_ms, 1), "infra_error": result.infra_error,
                           "cached": result.cached}  # fmt: skip
                if args.json:
                    print(json.dumps(row), flush=True)
                if bar is not None:
                    bar.update(1)
                return row

            rows = await asyncio.gather(*(one(name) for name in args.files))
        if bar is not None:
            bar.close()
        return rows

    try:
        rows = asyncio.run(run())
    except InfraError as exc:
        print(f"refpool render: {exc}", file=sys.stderr)
        return 3
    accepted = sum(r["accepted"] for r in rows)
    infra = sum(1 for r in rows if r["infra_error"])
    if not args.json:
        for r in rows:
            status = (
                "ok      " if r["accepted"] else ("INFRA   " if r["infra_error"] else "rejected")
            )
            why = "; ".join(f"{v['code']}: {v['message']}" + (f" (line {v['line']})" if v.get("line") else "")
                            for v in r["violations"]) or (r["infra_error"] or "")  # fmt: skip
            cov = f"coverage {r['coverage']:.3f}" if r["coverage"] is not None else ""
            print(
                f"{status} {r['file']}  {r['render_ms'] / 1000:.2f}s {cov} {r['png'] or ''} {why}".rstrip()
            )
        print(f"{len(rows)} rendered: {accepted} accepted, {len(rows) - accepted - infra} rejected, "
              f"{infra} infrastructure failures", file=sys.stderr)  # fmt: skip
    if infra:
        return 3
    return 0 if accepted == len(rows) else 1


def _serve_renderer(args: argparse.Namespace) -> int:
    from refpool.store import Store
    from renderer import RenderConfig, SyncRenderer
    from renderer.engine import default_slots
    from renderer.http_api import make_server

    config = RenderConfig(profile=args.profile, slots=args.slots or default_slots(),
                          cache_dir=Store.open().home / "render-cache")  # fmt: skip
    with SyncRenderer(config) as renderer:
        server = make_server(renderer, args.host, args.port)
        host, port = server.server_address[:2]
        print(f"renderer serving on http://{host}:{port}  (POST /render, GET /health)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0
