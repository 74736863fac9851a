"""`refpool candidates | rate | ratings | curators`: thin shells over curation/ (and the studio's options)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from curation import candidates_cli
from curation.curators import add_curator, check_name, list_curators, remove_curator, set_lead
from curation.ratings import record_rating
from curation.transfer import FORMATS, export_ratings, import_ratings
from refpool.core.contracts import RATING_ACTIONS
from refpool.core.defaults import TARGET_POOL_SIZE
from refpool.core.errors import InputError, RefpoolError
from refpool.core.store import Store


def studio_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Options shared by `refpool studio` and `python app.py`. Their help states each default
    itself: app.py's parser has argparse's own formatter, not refpool.cli's."""
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="interface to listen on; a non-loopback host turns login on (default: 127.0.0.1)",
    )
    parser.add_argument(
        "--port", type=int, default=None, help="port (default: Gradio's 7860, or the next free one)"
    )
    parser.add_argument(
        "--auth", action="store_true", help="require curator login even on loopback"
    )
    parser.add_argument(
        "--blind", action="store_true", help="hide model names and other curators' ratings"
    )
    parser.add_argument(
        "--ssl-certfile", default=None, help="TLS certificate (PEM) to serve over HTTPS"
    )
    parser.add_argument("--ssl-keyfile", default=None, help="TLS private key (PEM) for HTTPS")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this host name, e.g. a reverse proxy's public name"
        " (repeatable; any other name is refused, which stops DNS rebinding)",
    )
    parser.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="believe X-Forwarded-For/-Proto only from this proxy address or network"
        " (repeatable; by default no forwarded header is believed); turns login on",
    )
    parser.add_argument(
        "--curator",
        default="curator",
        help="curator name when login is off (default: curator; ?curator=NAME in the URL"
        " also works)",
    )
    parser.add_argument(
        "--target",
        type=int,
        default=TARGET_POOL_SIZE,
        help=f"pool size the progress bar counts towards (default: {TARGET_POOL_SIZE})",
    )
    return parser


def register(sub: argparse._SubParsersAction) -> None:
    candidates_cli.register(sub)
    p = sub.add_parser(
        "rate",
        help="record one rating from a script",
        description="Record one rating (committed before this returns).",
    )
    p.add_argument("candidate_id", type=int, help="the candidate's id")
    p.add_argument("tier", choices=RATING_ACTIONS, help="love, okay, reject (or skip)")
    p.add_argument("--curator", required=True, help="who is rating")
    p.add_argument("--note", default="", help="a free-text note stored with the rating")
    p.set_defaults(func=_rate)

    p = sub.add_parser(
        "ratings",
        help="export or import ratings",
        description="Export or import ratings (CSV, JSON or the published format).",
    )
    rsub = p.add_subparsers(
        dest="ratings_command", required=True, metavar="ACTION", help="export or import"
    )
    e = rsub.add_parser("export", help="write ratings to a file or stdout")
    e.add_argument(
        "--format",
        choices=FORMATS,
        default="csv",
        help="csv or json: one row per curator and candidate; published: file name ->"
        " love/okay/nope/meh",
    )
    e.add_argument(
        "--curator",
        default=None,
        help="only this curator (published: their labels instead of final tiers)",
    )
    e.add_argument("--out", type=Path, default=None, help="output file (default: stdout)")
    e.set_defaults(func=_export)
    i = rsub.add_parser("import", help="append ratings from a CSV/JSON/published file")
    i.add_argument("file", type=Path, help="a .csv or .json ratings file")
    i.add_argument(
        "--curator",
        default=None,
        help="curator to record them under (required for the published format)",
    )
    i.set_defaults(func=_import)

    p = sub.add_parser(
        "curators",
        help="manage curator accounts",
        description="Named curator accounts (passwords are stored as scrypt hashes).",
    )
    csub = p.add_subparsers(
        dest="curators_command", required=True, metavar="ACTION", help="add, list or remove"
    )
    a = csub.add_parser("add", help="add a curator or set their password")
    a.add_argument("name", help="curator name (letters, digits, . _ -)")
    a.add_argument(
        "--password-env",
        metavar="VAR",
        default=None,
        help="read the password from this environment variable (never from the"
        " command line, where it would land in shell history)",
    )
    a.add_argument(
        "--lead",
        choices=("yes", "no"),
        default=None,
        help="yes: a lead, who sees agreement and everyone's progress in a blind studio;"
        " no: an ordinary curator (default: unchanged; new curators are not leads)",
    )
    a.set_defaults(func=_add_curator)
    ls = csub.add_parser("list", help="list curators")
    ls.set_defaults(func=_list_curators)
    rm = csub.add_parser(
        "remove",
        help="remove a curator's account and end their studio sessions (ratings stay)",
    )
    rm.add_argument("name", help="curator name (any case or width: ALICE removes alice)")
    rm.set_defaults(func=_remove_curator)


def _rate(args: argparse.Namespace) -> int:
    store = Store.open()
    row = record_rating(store, args.candidate_id, check_name(args.curator), args.tier, args.note)
    print(f"rated candidate {args.candidate_id} {args.tier} by {args.curator} (rating {row})")
    return 0


def _export(args: argparse.Namespace) -> int:
    text = export_ratings(Store.open(), args.format, args.curator)
    if args.out:
        args.out.write_text(text, "utf-8")
        count = text.count("\n") - (1 if args.format == "csv" else 0)
        print(
            f"wrote {args.format} ratings to {args.out} (~{max(0, count)} lines)", file=sys.stderr
        )
    else:
        sys.stdout.write(text)
    return 0


def _import(args: argparse.Namespace) -> int:
    try:
        summary = import_ratings(Store.open(), args.file, args.curator)
    except RefpoolError:
        raise
    except (OSError, UnicodeDecodeError) as exc:  # a folder, unreadable or not text
        raise RefpoolError(f"cannot read the ratings file {args.file}: {exc}") from exc
    print(summary.text())
    return 0 if not summary.invalid else 1


def _add_curator(args: argparse.Namespace) -> int:
    password = None
    if args.password_env:
        password = os.environ.get(args.password_env)
        if not password:
            raise InputError(f"environment variable {args.password_env} is empty or not set")
    store = Store.open()
    created = add_curator(store, args.name, password)
    if args.lead is not None:
        set_lead(store, args.name, args.lead == "yes")
    what = "added" if created else "updated"
    role = {"yes": " as a lead", "no": " (not a lead)", None: ""}[args.lead]
    print(f"{what} curator {args.name}" + (" with a password" if password else "") + role)
    return 0


def _list_curators(args: argparse.Namespace) -> int:
    for c in list_curators(Store.open()):
        role = "\tlead" if c["lead"] else ""
        print(f"{c['name']}\t{'password' if c['has_password'] else 'no password'}{role}")
    return 0


def _remove_curator(args: argparse.Namespace) -> int:
    removed = remove_curator(Store.open(), args.name)
    if removed is None:
        raise InputError(f"no curator named {args.name!r}: `refpool curators list` shows them")
    print(f"removed curator {removed}; their studio sessions end at their next request")
    return 0
