"""CLI: `refpool photos import | list | update | withdraw | inaturalist` (thin shells over
refpool.intake; update and withdraw live in refpool/intake/cli_corrections.py)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from refpool.core.errors import RefpoolError
from refpool.core.store import Store
from refpool.intake import cli_corrections, inaturalist
from refpool.intake.facts import COLUMN_SOURCES, NO_SUBJECT
from refpool.intake.photos import COLUMNS_LINE, MIN_SIDE, OPTIONAL_COLUMNS, REQUIRED_COLUMNS

IMPORT_DESCRIPTION = (
    "Import the images listed in DIR/photos.csv. Each is checked (an open licence, an author,"
    f" a source, a readable image at least {MIN_SIDE} px on its shorter side, not a near"
    " duplicate of a photo already imported), normalised and stored; a refused file never"
    " stops the others, and an image in DIR that photos.csv does not list is refused. Importing"
    " the same folder again is harmless; a photo already imported whose row now says something"
    " else is reported with the `photos update` command that applies it. Every photo needs a"
    " subject (the subject column, or --subject): none is guessed. --dry-run shows everything"
    " read and inferred, and stores nothing. Exit status 1 if any file was refused."
)


def columns_table(width: int = 78) -> str:
    """The photos.csv columns and what each holds, as `photos import --help` prints them."""
    lines = []
    for title, columns in (("required", REQUIRED_COLUMNS), ("optional", OPTIONAL_COLUMNS)):
        lines.append(f"  {title}:")
        for name, meaning in columns.items():
            lines += textwrap.wrap(
                meaning,
                width,
                initial_indent=f"    {name:<9} ",
                subsequent_indent=" " * 14,
                break_on_hyphens=False,
            )
    lines.append("  any other column is kept with the photo as extra data")
    lines.append("")
    lines.append("  stored as:")
    for name, where in COLUMN_SOURCES.items():
        lines += textwrap.wrap(
            where.replace("`", ""),
            width,
            initial_indent=f"    {name:<9} ",
            subsequent_indent=" " * 14,
            break_on_hyphens=False,
        )
    intro = (
        "photos.csv holds one row per image, under a header row naming its columns in any order:"
    )
    return intro + "\n\n" + "\n".join(lines)


def register(sub: argparse._SubParsersAction) -> None:
    photos = sub.add_parser("photos", help="import, list and fetch openly licensed photos")
    psub = photos.add_subparsers(dest="photos_command", required=True, metavar="ACTION")

    p = psub.add_parser(
        "import",
        help=f"import DIR/photos.csv (columns {COLUMNS_LINE}); exit 1 if any file is refused",
        description=IMPORT_DESCRIPTION,
        epilog=columns_table(),
    )
    p.add_argument("folder", metavar="DIR", help="folder holding the images and photos.csv")
    p.add_argument(
        "--subject",
        metavar="WORD",
        help="what the photos show, for every row whose subject column is empty or missing"
        " (asked for at a terminal when some row has none)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="show what each row gives (subject, licence, author, source, size, outcome) and"
        " store nothing",
    )
    p.set_defaults(func=cmd_photos_import)

    p = psub.add_parser("list", help="list the photo library")
    p.add_argument("--json", action="store_true", help="print one JSON array")
    p.set_defaults(func=cmd_photos_list)

    cli_corrections.register(psub)

    p = psub.add_parser(
        "inaturalist",
        help="download research-grade, openly licensed photos from iNaturalist (first photo per observation)",
    )
    p.add_argument("--taxon", required=True, help='taxon name, e.g. "Hibiscus rosa-sinensis"')
    p.add_argument(
        "--licenses",
        default=",".join(inaturalist.OPEN_CODES),
        help="open licences to accept, comma-separated",
    )
    p.add_argument("--limit", type=int, default=20, help="number of observations")
    p.add_argument("--out", default=None, help="download folder (default: ./inaturalist/<taxon>)")
    p.add_argument("--api-url", default=None, help=f"API root (default: {inaturalist.DEFAULT_API})")
    p.add_argument(
        "--import", dest="do_import", action="store_true", help="import the download afterwards"
    )
    p.set_defaults(func=cmd_photos_inaturalist)


def _store() -> Store:
    return Store.open()


def cmd_photos_import(args) -> int:
    from refpool.intake.photos import import_folder, manifest_has_subjects

    folder = Path(args.folder)
    subject = getattr(args, "subject", None)
    if not subject and not manifest_has_subjects(folder):
        subject = _ask_subject(folder)
    dry_run = getattr(args, "dry_run", False)
    report = import_folder(_store(), folder, progress=not dry_run, subject=subject, dry_run=dry_run)
    if dry_run:
        for planned in report.planned:
            print(f"{planned.file}: {planned.outcome}")
            print("\n".join(planned.facts.lines()))
    for photo in report.imported:
        print(
            f"imported  #{photo.id} {photo.file_name} ({photo.subject}; {photo.licence},"
            f" {photo.author})"
        )
    for name, pid in report.already:
        print(f"already   #{pid} {name}")
    for change in report.changed:
        print(f"CHANGED   {change.line()}; to apply it: {change.command}")
    for name, reason in report.refused:
        print(f"REFUSED   {name}: {reason}")
    unnamed = sum(1 for _, reason in report.refused if reason == NO_SUBJECT)
    if unnamed:
        print(
            f"{unnamed} photo(s) have no subject: fill the subject column of photos.csv, or give"
            " --subject WORD (what they show) for every photo without one"
        )
    print(report.summary() + (" (dry run: nothing stored)" if dry_run else ""))
    return 0 if report.ok else 1


def _at_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _ask_subject(folder: Path) -> str | None:
    """At a terminal, ask what the photos without a subject show, and have it confirmed;
    elsewhere (a script, CI) ask nothing: those rows are refused, saying to give --subject."""
    if not _at_terminal():
        return None
    print(f"{folder / 'photos.csv'} gives no subject for some photos (nothing is guessed).")
    answer = input("What do they show (one word or phrase, e.g. dahlia; empty to refuse them)? ")
    answer = answer.strip()
    if not answer:
        return None
    sure = input(f"Record {answer!r} as the subject of every photo without one? [y/N] ")
    return answer if sure.strip().lower() in ("y", "yes") else None


def cmd_photos_list(args) -> int:
    from refpool.core.store.photo_corrections import withdrawn
    from refpool.core.store.photos import list_photos

    store = _store()
    photos, gone = list_photos(store), withdrawn(store)
    if args.json:
        print(json.dumps([p.to_dict() | {"withdrawn": gone.get(p.id)} for p in photos], indent=2))
        return 0
    for p in photos:
        mark = f"  WITHDRAWN: {gone[p.id]}" if p.id in gone else ""
        print(
            f"#{p.id:<4} {p.file_name:<40} {p.width}x{p.height:<6} {p.subject[:14]:<15}"
            f"{p.licence_label:<13} {p.author}{mark}"
        )
    print(f"{len(photos)} photo(s)" + (f", {len(gone)} withdrawn" if gone else ""))
    return 0


def cmd_photos_inaturalist(args) -> int:
    licences = inaturalist.parse_licences(args.licenses)
    out = Path(args.out or Path("inaturalist") / args.taxon.replace(" ", "_"))
    try:
        entries, skipped = inaturalist.fetch(
            args.taxon, licences, args.limit, out, api_url=args.api_url or inaturalist.DEFAULT_API
        )
    except OSError as exc:
        raise RefpoolError(
            f"could not reach iNaturalist ({exc}); check the network or --api-url"
        ) from exc
    for what, why in skipped:
        print(f"skipped   {what}: {why}")
    print(f"downloaded {len(entries)} photo(s) to {out} (photos.csv + manifest.json)")
    if args.do_import:
        args.folder = str(out)
        return cmd_photos_import(args)
    print(f"next: refpool photos import {out}")
    return 0
