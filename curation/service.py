"""The studio's service layer: every action a curator takes, as plain functions.

The Gradio UI (studio/ui.py) only wires these to components and formats their results;
tests call them directly. Each action returns a `Screen` describing what to show next.
Every rating is committed to SQLite before a Screen is returned, so the UI can only
confirm what is already durable; the cursor is stored too, so a reload resumes.
The big view's contents come from curation/detail.py, grid triage is curation/grid.py.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from typing import Any

from curation import queue as q
from curation.commands import (
    applied,
    not_shown_text,
    save_failed_text,
    saved_text,
    token_matches,
    view_token,
)
from curation.contracts import NOTE_LIMIT, RatingRequest, Screen, Services, Settings
from curation.curators import check_name, ensure_curator
from curation.detail import load_detail
from curation.gate_confirm import gate_confirm
from curation.prefetch import prefetch
from curation.ratings import (
    latest_rating,
    my_latest,
    record_rating_and_cursor,
    set_note,
    undo_last,
)
from curation.refine import MODEL_SORTS
from curation.viewer import queue_for, sees_everyone, viewer_ids
from refpool.core.errors import InputError, RefpoolError
from refpool.core.store import candidates

# the studio's contracts (curation/contracts.py) come with the service: callers import one module
__all__ = ["NOTE_LIMIT", "RatingRequest", "Screen", "Services", "Settings", "rate", "rate_request"]


def clean_filters(services: Services, filters: q.Filters) -> q.Filters:
    """Blind mode may not filter by model or by anyone else's ratings (the final tier is
    everyone's ratings combined, so it goes too), nor by a judge's ladder (it would anchor),
    nor by anything a model produced (critic scores, win rates)."""
    filters.validate()
    if services.settings.blind:
        sort = None if filters.sort in MODEL_SORTS else filters.sort
        filters = replace(
            filters, generator=None, curator=None, tier=None, disagreements=False, ladder=None
        )
        filters = replace(filters, critic_min=None, win_min=None, sort=sort)
    return filters


@dataclass
class QueueState:
    """One request's read of a curator's queue, shared by its checks and its screen: the
    session is loaded and the queue built once per request."""

    stored: int | None  # the stored cursor
    saved_filters: q.Filters
    filters: q.Filters  # the ones to show under (cleaned)
    ids: list[int]
    mine: dict[int, str]


def load_state(services: Services, curator: str, filters: q.Filters | None = None) -> QueueState:
    store, blind = services.store, services.settings.blind
    stored, saved = q.load_session(store, curator)
    shown = clean_filters(services, filters if filters is not None else saved)
    ids = queue_for(store, curator, shown, blind)
    return QueueState(stored, saved, shown, ids, my_latest(store, curator))


def current_queue(services: Services, curator: str) -> list[int]:
    """The ids in this curator's queue under their stored filters."""
    return load_state(services, curator).ids


# -- the screen ------------------------------------------------------------------------------
def screen(
    services: Services,
    curator: str,
    candidate_id: int | None = None,
    message: str = "",
    level: str = "info",
    filters: q.Filters | None = None,
    state: QueueState | None = None,
) -> Screen:
    """Show `candidate_id` (or the stored cursor), store it as the cursor, and report.
    `state` is the request's read of the queue when it already has one."""
    store, blind = services.store, services.settings.blind
    if state is None or filters is not None:
        state = load_state(services, curator, filters)
    stored, filters, ids, mine = state.stored, state.filters, state.ids, state.mine
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
    if candidate_id != stored or filters != state.saved_filters:  # no write when nothing moved
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
    want = services.settings.prefetch
    urls, next_id, next_url, by_id, unrated = (
        prefetch(store, want, ids, mine, candidate_id) if candidate_id else ([], None, None, {}, [])
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
        progress=q.progress(
            store, curator, ids, services.settings.target, not sees_everyone(store, curator, blind)
        ),
        position=pos,
        queue_len=len(ids),
        prefetch=urls,
        next_id=next_id,
        next_url=next_url,
        neighbours=neighbours,
        chain=[(i, by_id[i]) for i in unrated if i in by_id],
        filters=filters,
        blind=viewer_ids(store, curator, blind),
        tokens={i: view_token(store, curator, i) for i in (candidate_id, *by_id) if detail and i},
        queue=ids,
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
    services: Services, curator: str, candidate_id: int, tier: str, note: str = "", **options: Any
) -> Screen:
    """`rate_request` for a script or a test: the request's other fields as keywords."""
    return rate_request(services, RatingRequest(curator, candidate_id, tier, note, **options))


def rate_request(services: Services, request: RatingRequest) -> Screen:
    """Record one rating durably, with the cursor it advances to, then show that candidate.

    A key applies to what the curator saw, or to nothing (see RatingRequest). A re-rating
    without a new note keeps the note the old rating had. A love or okay for a painting the
    gate rejected is recorded only when the same key is pressed on it again (gate_confirm).
    """
    store, curator, candidate_id = services.store, request.curator, request.candidate_id
    try:
        note = check_note(request.note)
    except ValueError as exc:
        return _answer(screen(services, curator, candidate_id, str(exc), "error"), "failed")
    # held from the checks to the commit: a second tab cannot move the cursor in between
    with store.write_lock:
        state = load_state(services, curator)
        done = applied(store, request.command_id) if request.command_id else None
        if done is not None:
            again = f"Already saved {done[1]} for #{done[0]} (this key was sent again; kept once)."
            return _answer(screen(services, curator, None, again, "ok", state=state), "duplicate")
        token = request.token
        if token is not None and not token_matches(store, curator, candidate_id, token):
            never = not_shown_text(candidate_id, curator)
            return _answer(screen(services, curator, None, never, "error", state=state), "refused")
        if request.expected is not None:
            refused = _off_queue(
                services, curator, candidate_id, request.expected, request.tab, state
            )
            if refused is not None:
                return _answer(refused, "refused")
        ask = gate_confirm(services, curator, candidate_id, request.tier)
        if ask:
            return _answer(
                screen(services, curator, candidate_id, ask, "error", state=state), "confirm"
            )
        return _record(
            services,
            curator,
            candidate_id,
            request.tier,
            note,
            request.seen,
            state,
            request.command_id,
        )


def _answer(s: Screen, outcome: str) -> Screen:
    s.outcome = outcome
    return s


def _off_queue(
    services: Services,
    curator: str,
    candidate_id: int,
    expected: int,
    tab: str | None,
    state: QueueState,
) -> Screen | None:
    """The refusal when the queue is not where the page thought, else None."""
    stored = state.stored
    if stored is None or (stored == expected == candidate_id):
        return None  # no cursor yet (a first request from an API client): nothing to compare
    other_tab = tab is not None and services.cursor_tab.get(curator, tab) != tab
    where = "in another tab or window" if other_tab else "while this page was behind"
    message = (
        f"Not saved: the key was for #{candidate_id}, but your queue had moved on to #{stored}"
        f" {where}. Nothing was recorded for #{candidate_id}; this is #{stored}, press the key"
        " again to rate it."
    )
    return screen(services, curator, stored, message, "error", state=state)


def _record(
    services: Services,
    curator: str,
    candidate_id: int,
    tier: str,
    note: str,
    seen: int | None,
    state: QueueState,
    command_id: str | None = None,
) -> Screen:
    """One transaction (the rating and the cursor), then the screen built once from `state`."""
    store = services.store
    before = latest_rating(store, candidate_id, curator)
    if not note and before is not None:
        note = before.note
    ids = state.ids
    mine = {**state.mine, candidate_id: tier}
    nxt = q.next_unrated(ids, mine, candidate_id)
    done = nxt is None
    if done:
        nxt = candidate_id if candidate_id in ids else None
    try:
        record_rating_and_cursor(store, candidate_id, curator, tier, note, nxt, command_id)
    except LookupError:
        gone = (
            f"Candidate {candidate_id} no longer exists (deleted while shown); nothing was"
            " recorded for it. Here is the next one."
        )
        return _answer(screen(services, curator, None, gone, "warn", state=state), "refused")
    except ValueError as exc:
        failed = screen(services, curator, candidate_id, str(exc), "error", state=state)
        return _answer(failed, "failed")
    except (sqlite3.Error, OSError) as exc:
        failed_text = save_failed_text(tier, candidate_id, exc)
        failed = screen(services, curator, candidate_id, failed_text, "error", state=state)
        return _answer(failed, "failed")
    msg, level = saved_text(tier, candidate_id, seen, before, done)
    moved = replace(state, stored=nxt, mine=mine)  # what the transaction just stored
    return _answer(screen(services, curator, nxt, msg, level, state=moved), "saved")


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
    state = load_state(services, curator)
    return screen(services, curator, q.step(state.ids, candidate_id, delta), state=state)


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
