"""CLI: `refpool generate` (a thin shell over generators/; `refpool candidates` lives in
curation/candidates_cli.py, beside the ratings it shows)."""

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


def _store() -> Store:
    return Store.open()


def cmd_generate(args: argparse.Namespace) -> int:
    # imported per call: numpy and friends stay out of `refpool --help` (and tests replace it)
    from generators.batch import generate
    from generators.recorded import INTERRUPTED
    from generators.summary import format_summary, problems, provenance_lines
    from refpool.core.store import model_calls

    store = _store()
    before = model_calls.last_id(store)
    try:
        summary = _generate(generate, store, args)
    except KeyboardInterrupt:  # the requests in flight were recorded as interrupted: say so
        stopped = model_calls.with_outcome_after(store, before, INTERRUPTED)
        if stopped:
            print(
                f"interrupted: {len(stopped)} model request(s) in flight were recorded as"
                " interrupted (model, prompt, parameters, wait); none was paid for as a reply,"
                " and the rerun asks each again",
                file=sys.stderr,
            )
        raise
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


def _generate(generate: Any, store: Store, args: argparse.Namespace) -> dict[str, Any]:
    return generate(
        store,
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


def _remote_renderer(url: str | None) -> Any:
    """A client of the render service at `url` (the Renderer's interface), or None."""
    if not url:
        return None
    from renderer.client import RenderClient

    return RenderClient(url)
