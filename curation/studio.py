"""The studio's service layer: every action a curator takes, as plain functions.

The Gradio UI (curation/ui.py) only wires these to components and formats their results;
tests call them directly. Each action returns a `Screen` describing what to show next.
Every rating is committed to SQLite before a Screen is returned, so the UI can only
confirm what is already durable; the cursor is stored too, so a reload resumes.
The big view's contents come from curation/detail.py, grid triage is curation/grid.py.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field, replace

from curation import queue as q
from curation.curators import check_name, ensure_curator
from curation.detail import Detail, load_detail
from curation.files import render_url, warm_thumbnails
from curation.ratings import (
    latest_rating,
    my_latest,
    record_rating_and_cursor,
    set_note,
    undo_last,
)
from refpool.core.defaults import TARGET_POOL_SIZE
from refpool.core.errors import InputError, RefpoolError
from refpool.core.store import Store, candidates


@dataclass
class Settings:
    blind: bool = False  # hide model names and other curators' ratings
    target: int = TARGET_POOL_SIZE  # pool size the progress bar counts towards
    default_curator: str = "curator"
    auth: bool = False  # curators must log in (set when the studio is exposed)
    prefetch: int = 3  # how many upcoming renders the browser preloads
    grid_page_size: int = 48


NOTE_LIMIT = 2000  # characters; a note is a remark, not a document


@dataclass
class Services:
    """What the studio needs: the store and its settings."""

    store: Store
    settings: Settings = field(default_factory=Settings)
    # curator -> the page (Gradio session) whose action last moved their cursor: only for
    # wording a refused rating ("another tab" only when it was one); lost on restart
    cursor_tab: dict[str, str] = field(default_factory=dict)


@dataclass
class Screen:
    curator: str
    detail: Detail | None
    message: str = ""
    level: str = "info"  # info | ok | warn | error
    progress: q.Progress | None = None
    position: int = 0  # 1-based place in the queue (0: none)
    queue_len: int = 0
    prefetch: list[str] = field(default_factory=list)  # image URLs to preload
    next_id: int | None = None  # where a rating will advance to (shown at once by the JS)
    next_url: str | None = None
    neighbours: dict[str, tuple[int, str]] = field(default_factory=dict)  # "1"/"-1" -> (id, url)
    chain: list[tuple[int, str]] = field(default_factory=list)  # next unrated ones, in order
    filters: q.Filters = field(default_factory=q.Filters)
    nonce: int = field(default_factory=time.monotonic_ns)  # changes on every response

    @property
    def candidate_id(self) -> int | None:
        return self.detail.id if self.detail else None


def clean_filters(services: Services, filters: q.Filters) -> q.Filters:
    """Blind mode may not filter by model or by anyone else's ratings (the final tier is
    everyone's ratings combined, so it goes too), nor by a judge's ladder (it would anchor)."""
    filters.validate()
    if services.settings.blind:
        filters = replace(
            filters, generator=None, curator=None, tier=None, disagreements=False, ladder=None
        )
    return filters


def current_queue(services: Services, curator: str) -> list[int]:
    """The ids in this curator's queue under their stored filters."""
    _, filters = q.load_session(services.store, curator)
    return q.build_queue(services.store, curator, clean_filters(services, filters))


# -- the screen ------------------------------------------------------------------------------
def _prefetch(
    services: Services, ids: list[int], mine: dict[int, str], cid: int
) -> tuple[list[str], int | None, str | None, dict[int, str], list[int]]:
    """Renders the next keypresses will most likely show: the next unrated ones, then the
    arrow-key neighbours. Returns (urls to preload, the id a rating will advance to, its
    url, {id: url} of everything picked, the next unrated ids in order)."""
    store, want = services.store, services.settings.prefetch
    picks: list[int] = []
    after = cid
    for _ in range(want):
        nxt = q.next_unrated(ids, {**mine, **dict.fromkeys(picks, "love"), cid: "love"}, after)
        if nxt is None:
            break
        picks.append(nxt)
        after = nxt
    first = picks[0] if picks else None  # None: a rating finishes the queue
    unrated = list(picks)
    for nxt in (q.step(ids, cid, 1), q.step(ids, cid, -1)):  # arrow-key neighbours
        if nxt is not None and nxt != cid and nxt not in picks:
            picks.append(nxt)
    if not picks:
        return [], None, None, {}, []
    found = candidates.get_many(store, picks)
    urls = {c.id: render_url(c.png_sha) for c in found.values() if c.png_sha}
    # Their history strips show them and their parents as thumbnails: make those now.
    parents = candidates.get_many(store, [c.parent_id for c in found.values() if c.parent_id])
    warm_thumbnails(store, [c.png_sha for c in (*found.values(), *parents.values()) if c.png_sha])
    return (
        [urls[i] for i in picks if i in urls],
        first,
        urls.get(first) if first is not None else None,
        urls,
        unrated,
    )


def screen(
    services: Services,
    curator: str,
    candidate_id: int | None = None,
    message: str = "",
    level: str = "info",
    filters: q.Filters | None = None,
) -> Screen:
    """Show `candidate_id` (or the stored cursor), store it as the cursor, and report."""
    store, blind = services.store, services.settings.blind
    stored, saved_filters = q.load_session(store, curator)
    filters = clean_filters(services, filters if filters is not None else saved_filters)
    ids = q.build_queue(store, curator, filters)
    mine = my_latest(store, curator)
    if candidate_id is None:
        candidate_id, moved = q.resolve_current(ids, mine, stored)
        if moved and not message:
            message, level = f"candidate {stored} is no longer in this queue; moved on", "warn"
    detail = load_detail(store, candidate_id, curator, blind) if candidate_id is not None else None
    if candidate_id is not None and detail is None:
        gone = candidate_id
        candidate_id, _ = q.resolve_current(ids, mine, gone)
        detail = load_detail(store, candidate_id, curator, blind) if candidate_id else None
        message = (
            message + " " if message else ""
        ) + f"candidate {gone} no longer exists (deleted)."
        level = "warn"
    q.save_session(store, curator, candidate_id, filters)
    if detail is None and not message:
        if candidates.count(store) == 0:
            message = (
                "The store has no candidates yet. Generate some first (for example"
                " `refpool demo`), then reload this page."
            )
        else:
            message = "No candidate matches these filters. Clear the filters to see the rest."
        level = "warn"
    pos = ids.index(candidate_id) + 1 if candidate_id in ids else 0
    urls, next_id, next_url, by_id, unrated = (
        _prefetch(services, ids, mine, candidate_id) if candidate_id else ([], None, None, {}, [])
    )
    neighbours = {}
    for delta in (1, -1):
        n = q.step(ids, candidate_id, delta) if candidate_id in ids else None
        if n is not None and n != candidate_id and n in by_id:
            neighbours[str(delta)] = (n, by_id[n])
    return Screen(
        curator=curator,
        detail=detail,
        message=message,
        level=level,
        progress=q.progress(store, curator, ids, services.settings.target, blind),
        position=pos,
        queue_len=len(ids),
        prefetch=urls,
        next_id=next_id,
        next_url=next_url,
        neighbours=neighbours,
        chain=[(i, by_id[i]) for i in unrated if i in by_id],
        filters=filters,
    )


class NotLoggedIn(RefpoolError, PermissionError):
    """An exposed studio was used without logging in."""


def resolve_curator(services: Services, claimed: str | None, username: str | None) -> str:
    """Who is acting: the logged-in user when auth is on, else the name typed in the studio."""
    if services.settings.auth:
        if not username:
            raise NotLoggedIn("log in first: this studio requires a curator account")
        return check_name(username)
    return ensure_curator(services.store, claimed or services.settings.default_curator)


# -- actions ---------------------------------------------------------------------------------
def check_note(note: str) -> str:
    note = (note or "").strip()
    if len(note) > NOTE_LIMIT:
        raise InputError(
            f"The note is {len(note)} characters; the limit is {NOTE_LIMIT}. Shorten it and"
            " try again (nothing was saved)."
        )
    return note


def rate(
    services: Services,
    curator: str,
    candidate_id: int,
    tier: str,
    note: str = "",
    seen: int | None = None,
    expected: int | None = None,
    tab: str | None = None,
) -> Screen:
    """Record one rating durably, with the cursor it advances to, then show that candidate.

    `expected` is the candidate the page believes the curator's queue is at (the one on
    screen when the key was pressed). When given, the rating is refused unless the stored
    cursor is there too: a key applies to what the curator saw, or to nothing. `tab` names
    the page, so a refusal only blames another tab when it was one.
    A re-rating without a new note keeps the note the old rating had.
    """
    store = services.store
    try:
        note = check_note(note)
    except ValueError as exc:
        return screen(services, curator, candidate_id, str(exc), "error")
    # held from the cursor check to the commit: a second tab cannot move it in between
    with store.write_lock:
        if expected is not None:
            refused = _off_queue(services, curator, candidate_id, expected, tab)
            if refused is not None:
                return refused
        return _record(services, curator, candidate_id, tier, note, seen)


def _off_queue(
    services: Services, curator: str, candidate_id: int, expected: int, tab: str | None
) -> Screen | None:
    """The refusal when the queue is not where the page thought, else None."""
    stored, _ = q.load_session(services.store, curator)
    if stored is None or (stored == expected == candidate_id):
        return None  # no cursor yet (a first request from an API client): nothing to compare
    other_tab = tab is not None and services.cursor_tab.get(curator, tab) != tab
    where = "in another tab or window" if other_tab else "while this page was behind"
    message = (
        f"Not saved: the key was for #{candidate_id}, but your queue had moved on to #{stored}"
        f" {where}. Nothing was recorded for #{candidate_id}; this is #{stored}, press the key"
        " again to rate it."
    )
    return screen(services, curator, stored, message, "error")


def _record(
    services: Services, curator: str, candidate_id: int, tier: str, note: str, seen: int | None
) -> Screen:
    store = services.store
    before = latest_rating(store, candidate_id, curator)
    if not note and before is not None:
        note = before.note
    ids = current_queue(services, curator)
    nxt = q.next_unrated(ids, {**my_latest(store, curator), candidate_id: tier}, candidate_id)
    done = nxt is None
    if done:
        nxt = candidate_id if candidate_id in ids else None
    try:
        record_rating_and_cursor(store, candidate_id, curator, tier, note, nxt)
    except LookupError:
        gone = (
            f"Candidate {candidate_id} no longer exists (deleted while shown); nothing was"
            " recorded for it. Here is the next one."
        )
        return screen(services, curator, None, gone, "warn")
    except ValueError as exc:
        return screen(services, curator, candidate_id, str(exc), "error")
    except (sqlite3.Error, OSError) as exc:
        failed = (
            f"Could not save {tier} for #{candidate_id}: {exc}. Nothing was recorded; press"
            " the key again (if it keeps failing, check the data directory's disk and lock)."
        )
        return screen(services, curator, candidate_id, failed, "error")
    msg, level = f"Saved {tier} for #{candidate_id}.", "ok"
    if seen is not None and seen >= 0 and before is not None and before.id != seen:
        msg = (
            f"Saved {tier} for #{candidate_id}. It had been rated {before.tier} since this page"
            " showed it (in another tab, window or the Grid); your new rating replaces it"
            " (z undoes)."
        )
        level = "warn"
    if done:
        msg += " Everything in this queue is rated."
    return screen(services, curator, nxt, msg, level)


def undo_message(services: Services, curator: str) -> tuple[str, str, int | None]:
    """Undo this curator's latest rating; (what it undid, level, the candidate it touched)."""
    rows = undo_last(services.store, curator)
    if not rows:
        return "Nothing to undo.", "warn", None
    cid = rows[-1]["candidate_id"]
    if len(rows) > 1:
        return f"Undid {len(rows)} grid ratings (#{cid} and the rest of that batch).", "ok", cid
    if rows[0]["source"] == "note":
        now = latest_rating(services.store, cid, curator)
        kept = f"your rating stays {now.tier}" if now else "you have no rating on it"
        previous = f" with the note “{now.note}”" if now and now.note else " with no note"
        return f"Undid your note on #{cid}; {kept}{previous if now else ''}.", "ok", cid
    return f"Undid {rows[0]['tier']} on #{cid}.", "ok", cid


def undo(services: Services, curator: str) -> Screen:
    message, level, cid = undo_message(services, curator)
    return screen(services, curator, cid, message, level)


def navigate(services: Services, curator: str, candidate_id: int | None, delta: int) -> Screen:
    return screen(services, curator, q.step(current_queue(services, curator), candidate_id, delta))


def goto(services: Services, curator: str, candidate_id: int) -> Screen:
    return screen(services, curator, candidate_id)


def note(services: Services, curator: str, candidate_id: int, text: str) -> Screen:
    try:
        text = check_note(text)
    except ValueError as exc:
        return screen(services, curator, candidate_id, str(exc), "error")
    if not text:
        return screen(services, curator, candidate_id, "The note is empty.", "warn")
    try:
        row = set_note(services.store, candidate_id, curator, text)
    except LookupError:
        gone = f"Candidate {candidate_id} no longer exists."
        return screen(services, curator, None, gone, "warn")
    if row is None:
        kept = "Note kept: it will be saved with your rating of this candidate."
        return screen(services, curator, candidate_id, kept, "info")
    return screen(services, curator, candidate_id, f"Note saved on #{candidate_id}.", "ok")


def set_filters(services: Services, curator: str, filters: q.Filters) -> Screen:
    filters = clean_filters(services, filters)
    stored, _ = q.load_session(services.store, curator)
    q.save_session(services.store, curator, stored, filters)
    return screen(services, curator, None, filters=filters)
