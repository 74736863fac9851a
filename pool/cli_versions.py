"""CLI for released versions: `refpool pool diff|versions|withdraw`. Handlers only parse, call
pool.* and print."""

from __future__ import annotations

import argparse
import json

from refpool.core.store import Store


def register(psub: argparse._SubParsersAction) -> None:
    d = psub.add_parser(
        "diff", help="each reference that entered, left or moved between two versions, and why"
    )
    d.add_argument("a", help="older version (or 'draft')")
    d.add_argument("b", help="newer version (or 'draft')")
    d.add_argument("--json", action="store_true", help="print JSON")
    d.set_defaults(func=cmd_diff)

    v = psub.add_parser("versions", help="list released versions, withdrawn ones marked")
    v.add_argument("--json", action="store_true", help="print JSON")
    v.set_defaults(func=cmd_versions)

    w = psub.add_parser(
        "withdraw",
        help="mark a version withdrawn (its card, `pool versions`, the Hub); its files are kept",
    )
    w.add_argument("version", help="the version to withdraw, e.g. 1.1.0")
    w.add_argument("--reason", required=True, help="why: shown on its card and on the Hub")
    w.add_argument(
        "--endpoint", default=None, help="Hub URL (default: the one it was published to)"
    )
    w.set_defaults(func=cmd_withdraw)


def cmd_diff(args: argparse.Namespace) -> int:
    from pool.selection.versions import diff_versions

    diff = diff_versions(Store.open(), args.a, args.b)
    print(json.dumps(diff.to_dict(), indent=2) if args.json else diff.summary())
    return 0


def cmd_versions(args: argparse.Namespace) -> int:
    from pool.selection.versions import list_versions
    from refpool.core.store import release_marks, releases

    store = Store.open()
    versions = list_versions(store)
    frozen = releases.freezes(store)
    gone = release_marks.withdrawals(store)
    if args.json:
        listed = [
            {
                **v.to_dict(),
                "frozen_by": f.frozen_by if (f := frozen.get(v.version)) else None,
                "withdrawn": (
                    {"at": w.withdrawn_at, "reason": w.reason}
                    if (w := gone.get(v.version))
                    else None
                ),
            }
            for v in versions
        ]
        print(json.dumps(listed, indent=2))
        return 0
    if not versions:
        print("no versions released yet (refpool pool build, then refpool pool release)")
    for v in versions:
        love = sum(1 for t in v.tiers.values() if t == "love")
        refs = f"{len(v.candidate_ids):>4} refs (love {love})"
        state = frozen.get(v.version)
        note = state.note if state else "not frozen: frozen as its next export writes it"
        print(f"{v.version:<10} {v.created_at:<22} {refs}  {v.notes}".rstrip())
        print(f"{'':<10} {note}")
        if w := gone.get(v.version):
            print(f"{'':<10} {w.note}")
    return 0


def cmd_withdraw(args: argparse.Namespace) -> int:
    from pool.dataset.withdraw import withdraw_version

    result = withdraw_version(Store.open(), args.version, args.reason, endpoint=args.endpoint)
    print(result.summary())
    return 0
