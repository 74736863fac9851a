"""CLI: `refpool generate`, `refpool candidates list` (thin shells over generators/)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from refpool.core.defaults import ROUNDS
from refpool.core.errors import EXIT_INFRA
from refpool.core.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser(
        "generate",
        help="paint photos over refinement rounds (procedural by default: no key, no network)",
    )
    g.add_argument("--photos", nargs="+", type=int, metavar="ID", help="photo ids (default: all)")
    g.add_argument(
        "--generator",
        nargs="+",
        default=["procedural"],
        metavar="NAME",
        help="procedural and/or model names from the models file (e.g. glm-5.2 kimi-k3)",
    )
    g.add_argument("--candidates", type=int, default=2, help="candidates per photo and generator")
    g.add_argument(
        "--rounds",
        type=int,
        default=ROUNDS,
        help="rounds: 1 generate + revisions",
    )
    g.add_argument(
        "--concurrency",
        type=int,
        default=4,
        help="model requests in flight per endpoint; twice as many chains run so rendering"
        " overlaps the waits",
    )
    g.add_argument("--seed", type=int, default=0, help="base seed; a new seed gives new candidates")
    g.add_argument(
        "--critic", default="heuristic", help="heuristic (offline) or a vision model's name"
    )
    g.add_argument(
        "--models-file",
        default=None,
        help="your own models JSON (default: $REFPOOL_MODELS or presets)",
    )
    g.add_argument(
        "--retry-failed",
        action="store_true",
        help="ask a critic again that refused permanently in an earlier run (e.g. HTTP 400)",
    )
    g.add_argument(
        "--renderer",
        default=None,
        metavar="URL",
        help="render through a `refpool serve-renderer` service (one machine or a Ray cluster)",
    )
    g.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    g.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    g.set_defaults(func=cmd_generate)

    c = sub.add_parser("candidates", help="inspect generated candidates")
    csub = c.add_subparsers(dest="candidates_command", required=True, metavar="ACTION")
    ls = csub.add_parser("list", help="id, photo, model, round, accepted, coverage, png path")
    ls.add_argument("--json", action="store_true", help="print one JSON array")
    ls.set_defaults(func=cmd_candidates_list)


def _store() -> Store:
    return Store.open()


def cmd_generate(args: argparse.Namespace) -> int:
    # imported per call: numpy and friends stay out of `refpool --help` (and tests replace it)
    from generators.batch import generate
    from generators.summary import format_summary, problems, provenance_lines

    summary = generate(
        _store(),
        photo_ids=args.photos,
        generators=tuple(args.generator),
        candidates=args.candidates,
        rounds=args.rounds,
        concurrency=args.concurrency,
        seed=args.seed,
        progress=not args.no_progress,
        critic=args.critic,
        models_file=args.models_file,
        retry_failed=args.retry_failed,
        # only when asked: None would override a renderer the caller (a test) bound already
        **({"renderer": _remote_renderer(args.renderer)} if args.renderer else {}),
    )
    print(json.dumps(summary) if args.json else format_summary(summary))
    if args.json:  # the table's notes, where a user reading the JSON still sees them
        for line in provenance_lines(summary):
            print(f"note: {line}", file=sys.stderr)
    from generators.attempts import adaptation_notes

    for line in adaptation_notes(summary.get("adapted", {})):
        print(f"note: {line}", file=sys.stderr)
    trouble = problems(summary)
    for line in trouble:
        print(f"error: {line}", file=sys.stderr)
    down = (summary.get("render") or {}).get("renderer_down")
    if down:
        from renderer.engine import RENDERER_DOWN_ADVICE

        # our machinery, not the programs: exit 3, as every infrastructure failure does
        print(f"error: the renderer stopped: {down}. {RENDERER_DOWN_ADVICE}", file=sys.stderr)
        return EXIT_INFRA
    return 1 if trouble else 0


def _remote_renderer(url: str | None) -> Any:
    """A client of the render service at `url` (the Renderer's interface), or None."""
    if not url:
        return None
    from renderer.client import RenderClient

    return RenderClient(url)


def cmd_candidates_list(args: argparse.Namespace) -> int:
    from generators.summary import list_candidates

    rows = list_candidates(_store())
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'id':>5} {'photo':<34} {'model':<20} {'rnd':>3} {'ok':>3} {'cov':>6}  png")
    for r in rows:
        cov = f"{r['coverage']:.3f}" if r["coverage"] is not None else "-"
        ok = "yes" if r["accepted"] else r["outcome"] if r["outcome"] != "ok" else "no"
        print(
            f"{r['id']:>5} {r['photo'][:34]:<34} {r['model'][:20]:<20} {r['round']:>3}"
            f" {ok:>3} {cov:>6}  {r['png'] or '-'}"
        )
    for line in _served_notes(rows):
        print(line)
    print(f"{len(rows)} candidate(s)")
    return 0


def _served_notes(rows: list[dict[str, Any]]) -> list[str]:
    """One line per model whose candidates another model wrote, as the server said."""
    from generators.served import same_model

    found: dict[tuple[str, str, str], list[int]] = {}
    for r in rows:
        asked, served = r["requested_model"], r["served_model"]
        if asked and served and not same_model(asked, served):
            found.setdefault((r["model"], asked, served), []).append(r["id"])
    return [
        f"{name}: candidate(s) {', '.join(map(str, ids))} written by {served}, as the server"
        f" said (not {asked} as requested)"
        for (name, asked, served), ids in found.items()
    ]
