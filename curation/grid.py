"""Grid triage: a page of thumbnails of the curator's queue, rated several at a time.

A batch of grid ratings shares one `source`, so one undo reverts the whole batch.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from curation import queue as q
from curation.blind_ids import BlindIds
from curation.files import thumbnail_url
from curation.ratings import my_latest, record_rating
from curation.service import Services, current_queue, undo_message
from curation.viewer import sees_everyone, viewer_ids
from refpool.core.contracts import POOL_TIERS
from refpool.core.errors import InputError
from refpool.core.store import candidates

# A grid action rates what is selected on one page (the selection is cleared with each page,
# 48 tiles by default), so a batch past this is not a curator's: refused before any write.
GRID_BATCH_LIMIT = 200


@dataclass
class Tile:
    id: int
    thumb_url: str | None
    my_tier: str | None
    generator: str | None  # None in blind mode
    round: int


@dataclass
class Grid:
    tiles: list[Tile]
    page: int
    pages: int
    message: str = ""
    level: str = "info"
    progress: q.Progress | None = None
    page_size: int = 48
    blind: BlindIds | None = None  # blind mode: the page shows tokens, not ids


def show(
    services: Services, curator: str, page: int = 1, message: str = "", level: str = "info"
) -> Grid:
    """One page of the curator's queue as thumbnails (the page is clamped to what exists)."""
    store, size = services.store, services.settings.grid_page_size
    ids = current_queue(services, curator)
    pages = max(1, -(-len(ids) // size))
    page = max(1, min(pages, int(page or 1)))
    mine = my_latest(store, curator)
    on_page = candidates.get_many(store, ids[(page - 1) * size : page * size])
    tiles = [
        Tile(
            id=c.id,
            thumb_url=thumbnail_url(store, c.png_sha),
            my_tier=mine.get(c.id),
            generator=None if services.settings.blind else c.generator,
            round=c.round,
        )
        for c in on_page.values()
    ]
    if not ids and not message:
        message, level = "No candidates to show (empty store or filters match nothing).", "warn"
    blind = services.settings.blind
    hidden = not sees_everyone(store, curator, blind)
    progress = q.progress(store, curator, ids, services.settings.target, hidden)
    tokens = viewer_ids(store, curator, blind)
    return Grid(tiles, page, pages, message, level, progress, size, tokens)


def rate(services: Services, curator: str, ids: list[int], tier: str, page: int = 1) -> Grid:
    """Rate several candidates in one action; one undo reverts the whole batch."""
    if not ids:
        return show(services, curator, page, "Select some thumbnails first (click them).", "warn")
    ids = list(dict.fromkeys(ids))  # a repeated id is one rating
    if len(ids) > GRID_BATCH_LIMIT:
        raise InputError(
            f"a grid action rates at most {GRID_BATCH_LIMIT} candidates at once; this one"
            f" names {len(ids)}. Select fewer (one page at a time); nothing was saved"
        )
    batch = f"grid:{uuid.uuid4().hex[:12]}"
    done, gone, rejected = 0, [], []
    if tier in POOL_TIERS:  # a gate-rejected painting enters a pool only on purpose, one by one
        found = candidates.get_many(services.store, ids)
        rejected = [cid for cid in ids if cid in found and not found[cid].accepted]
        ids = [cid for cid in ids if cid not in rejected]
    tokens = viewer_ids(services.store, curator, services.settings.blind)
    for cid in ids:
        try:
            record_rating(services.store, cid, curator, tier, source=batch)
            done += 1
        except LookupError:
            gone.append(cid)
    msg = f"Saved {tier} for {done} candidates."
    if gone:  # named as the curator knows them: a blind curator by their own tokens
        msg += f" {len(gone)} no longer exist and were left out: {_named(gone, tokens)}."
    if rejected:
        msg += (
            f" {len(rejected)} {'was' if len(rejected) == 1 else 'were'} rejected by the gate"
            f" and not rated {tier}:"
            f" {_named(rejected, tokens)}. Open one in the Rate tab to rate it on purpose."
        )
    return show(services, curator, page, msg, "warn" if gone or rejected else "ok")


def _named(ids: list[int], tokens: BlindIds | None) -> str:
    named = ", ".join(f"#{tokens.token(c) if tokens else c}" for c in ids[:10])
    return named + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")


def undo(services: Services, curator: str, page: int = 1) -> Grid:
    """The grid's undo button: the same undo as `z` (a whole grid batch at once)."""
    message, level, _ = undo_message(services, curator)
    return show(services, curator, page, message, level)


def parse_ids(text: str) -> list[int]:
    """ "1, 2 3" -> [1, 2, 3]; raises ValueError naming the bad token."""
    out = []
    for token in str(text or "").replace(",", " ").split():
        if not token.isdigit():
            raise InputError(f"not a candidate id: {token!r}")
        out.append(int(token))
    return out
