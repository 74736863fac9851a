"""CLI: `refpool photos ...`, `refpool generate`, `refpool candidates list` (thin shells)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    photos = sub.add_parser("photos", help="import, list and fetch openly licensed photos")
    psub = photos.add_subparsers(dest="photos_command", required=True, metavar="ACTION")

    p = psub.add_parser(
        "import",
        help="import DIR/photos.csv (columns file,source,author,license[,notes]); exit 1 if any file is refused",
    )
    p.add_argument("folder", metavar="DIR", help="folder holding the images and photos.csv")
    p.set_defaults(func=cmd_photos_import)

    p = psub.add_parser("list", help="list the photo library")
    p.add_argument("--json", action="store_true", help="print one JSON array")
    p.set_defaults(func=cmd_photos_list)

    p = psub.add_parser(
        "inaturalist",
        help="download research-grade, openly licensed photos from iNaturalist (first photo per observation)",
    )
    p.add_argument("--taxon", required=True, help='taxon name, e.g. "Hibiscus rosa-sinensis"')
    p.add_argument(
        "--licenses", default="cc0,cc-by,cc-by-sa", help="comma-separated: cc0,cc-by,cc-by-sa"
    )
    p.add_argument("--limit", type=int, default=20, help="number of observations (default 20)")
    p.add_argument("--out", default=None, help="download folder (default ./inaturalist/<taxon>)")
    p.add_argument("--api-url", default=None, help="API root (default https://api.inaturalist.org)")
    p.add_argument(
        "--import", dest="do_import", action="store_true", help="import the download afterwards"
    )
    p.set_defaults(func=cmd_photos_inaturalist)

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
        "--rounds", type=int, default=3, help="rounds: 1 generate + revisions (default 3)"
    )
    g.add_argument(
        "--concurrency",
        type=int,
        default=4,
        help="model requests in flight per endpoint (default 4); twice as many chains run so rendering overlaps the waits",
    )
    g.add_argument(
        "--seed", type=int, default=0, help="base seed (a new seed gives new candidates)"
    )
    g.add_argument(
        "--critic", default="heuristic", help="heuristic (offline) or a vision model's name"
    )
    g.add_argument(
        "--models-file",
        default=None,
        help="your own models JSON (default $REFPOOL_MODELS or presets)",
    )
    g.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    g.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    g.set_defaults(func=cmd_generate)

    c = sub.add_parser("candidates", help="inspect generated candidates")
    csub = c.add_subparsers(dest="candidates_command", required=True, metavar="ACTION")
    ls = csub.add_parser("list", help="id, photo, model, round, accepted, coverage, png path")
    ls.add_argument("--json", action="store_true", help="print one JSON array")
    ls.set_defaults(func=cmd_candidates_list)


def _store():
    from pool.store import Store

    return Store.open()


def cmd_photos_import(args) -> int:
    from pool.photos import import_folder

    try:
        report = import_folder(_store(), Path(args.folder), progress=True)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for photo in report.imported:
        print(f"imported  #{photo.id} {photo.file_name} ({photo.licence}, {photo.author})")
    for name, pid in report.already:
        print(f"already   #{pid} {name}")
    for name, reason in report.refused:
        print(f"REFUSED   {name}: {reason}")
    print(report.summary())
    return 0 if report.ok else 1


def cmd_photos_list(args) -> int:
    from pool.photos import list_photos

    photos = list_photos(_store())
    if args.json:
        print(json.dumps([p.to_dict() for p in photos], indent=2))
        return 0
    for p in photos:
        print(f"#{p.id:<4} {p.file_name:<40} {p.width}x{p.height:<6} {p.licence:<9} {p.author}")
    print(f"{len(photos)} photo(s)")
    return 0


def cmd_photos_inaturalist(args) -> int:
    from pool import inaturalist

    try:
        licences = inaturalist.parse_licences(args.licenses)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or Path("inaturalist") / args.taxon.replace(" ", "_"))
    try:
        entries, skipped = inaturalist.fetch(
            args.taxon, licences, args.limit, out, api_url=args.api_url or inaturalist.DEFAULT_API
        )
    except OSError as exc:
        print(f"error: could not reach iNaturalist ({exc}); check the network or --api-url",
              file=sys.stderr)  # fmt: skip
        return 2
    for what, why in skipped:
        print(f"skipped   {what}: {why}")
    print(f"downloaded {len(entries)} photo(s) to {out} (photos.csv + manifest.json)")
    if args.do_import:
        args.folder = str(out)
        return cmd_photos_import(args)
    print(f"next: refpool photos import {out}")
    return 0


def cmd_generate(args) -> int:
    from generators.batch import format_summary, generate

    try:
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
        )
    except (LookupError, ValueError, RuntimeError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0


def cmd_candidates_list(args) -> int:
    from generators.batch import list_candidates

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
    print(f"{len(rows)} candidate(s)")
    return 0
