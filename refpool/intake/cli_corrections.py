"""CLI: `refpool photos update ID` and `refpool photos withdraw ID` (refpool/core/store/
photo_corrections.py keeps each change, with its reason).

A correction reaches the next draft and release; a version already released keeps the facts
it was frozen with. A withdrawn photo's paintings leave the next draft with its reason.
"""

from __future__ import annotations

import argparse

from refpool.core.errors import InputError
from refpool.core.store import Store, photo_corrections
from refpool.core.store.photos import get_photo
from refpool.intake.facts import normalise_licence, split_source

UPDATE_DESCRIPTION = (
    "Correct a photo's licence, author, source URL, subject or notes. The next `pool build` and"
    " `pool release` use the corrected facts; versions already released keep the facts they"
    " were frozen with (release a new version to publish the correction). Every change is kept"
    " with its reason; `photos show ID` lists them."
)
WITHDRAW_DESCRIPTION = (
    "Withdraw a photo (a licence revoked, an author who asked, a wrong attribution): its"
    " paintings leave the next draft, which gives the reason. Released versions keep their files"
    " for whoever pinned them; release a new version without it."
)


def register(psub: argparse._SubParsersAction) -> None:
    p = psub.add_parser(
        "update",
        help="correct a photo's licence, author, source URL or subject (for the next release)",
        description=UPDATE_DESCRIPTION,
    )
    p.add_argument("photo_id", metavar="ID", type=int, help="the photo's id (refpool photos list)")
    p.add_argument("--licence", help="the corrected licence, e.g. 'CC BY-SA 4.0' (open only)")
    p.add_argument("--author", help="who to credit")
    p.add_argument("--source-url", help="the photo's page")
    p.add_argument("--subject", help="what the photo shows")
    p.add_argument("--notes", help="free text stored with the photo")
    p.add_argument("--reason", default="", help="why, kept with the change")
    p.set_defaults(func=cmd_photos_update)

    p = psub.add_parser(
        "withdraw",
        help="withdraw a photo: its paintings leave the next draft, with the reason",
        description=WITHDRAW_DESCRIPTION,
    )
    p.add_argument("photo_id", metavar="ID", type=int, help="the photo's id (refpool photos list)")
    p.add_argument("--reason", required=True, help="why, e.g. 'the author withdrew the licence'")
    p.set_defaults(func=cmd_photos_withdraw)

    p = psub.add_parser("show", help="one photo: its facts, corrections and withdrawal")
    p.add_argument("photo_id", metavar="ID", type=int, help="the photo's id (refpool photos list)")
    p.set_defaults(func=cmd_photos_show)


def corrections_from(args: argparse.Namespace) -> dict[str, str]:
    """The changed facts the options give, normalised as import stores them."""
    changes: dict[str, str] = {}
    if args.licence is not None:
        licence, version = normalise_licence(args.licence)
        changes |= {"licence": licence, "licence_version": version}
    if args.author is not None:
        if not args.author.strip():
            raise InputError("the author is empty; open licences need someone to credit")
        changes["author"] = args.author.strip()
    if args.source_url is not None:
        url, _ = split_source(args.source_url)
        if not url:
            raise InputError("the source URL is empty; give the photo's page")
        changes["source_url"] = url
    if args.subject is not None:
        if not args.subject.strip():
            raise InputError("the subject is empty; say what the photo shows")
        changes["subject"] = args.subject.strip()
    if args.notes is not None:
        changes["notes"] = args.notes
    return changes


def cmd_photos_update(args: argparse.Namespace) -> int:
    changes = corrections_from(args)
    if not changes:
        raise InputError(
            "nothing to correct: name the licence, author, source URL, subject or notes to change"
        )
    store = Store.open()
    made = photo_corrections.correct(store, args.photo_id, changes, args.reason)
    photo = get_photo(store, args.photo_id)
    if not made:
        print(f"photo {photo.id} ({photo.file_name}) already says that; nothing changed")
        return 0
    for c in made:
        print(f"photo {photo.id} {c.field}: {c.before!r} -> {c.after!r}")
    print(
        f"corrected photo {photo.id} ({photo.file_name}); the next `refpool pool build` and"
        " `pool release` use it; released versions keep the facts they were frozen with"
    )
    return 0


def cmd_photos_withdraw(args: argparse.Namespace) -> int:
    store = Store.open()
    photo = get_photo(store, args.photo_id)
    photo_corrections.withdraw(store, photo.id, args.reason)
    print(
        f"withdrew photo {photo.id} ({photo.file_name}): {args.reason.strip()}. Its paintings"
        " leave the next `refpool pool build`; released versions keep their files"
    )
    return 0


def cmd_photos_show(args: argparse.Namespace) -> int:
    store = Store.open()
    p = get_photo(store, args.photo_id)
    gone = photo_corrections.withdrawn(store).get(p.id)
    print(f"photo {p.id}  {p.file_name}  {p.width}x{p.height}")
    print(f"  subject  {p.subject}")
    print(f"  licence  {p.licence_label}")
    print(f"  author   {p.author}")
    print(f"  source   {p.source_url}")
    if p.notes:
        print(f"  notes    {p.notes}")
    if gone:
        print(f"  WITHDRAWN: {gone}")
    for c in photo_corrections.history(store, p.id):
        why = f" ({c.reason})" if c.reason and c.field != photo_corrections.WITHDRAWN else ""
        print(f"  {c.made_at}  {c.field}: {c.before!r} -> {c.after!r}{why}")
    return 0
