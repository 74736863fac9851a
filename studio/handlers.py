"""The studio's endpoints: translate Gradio inputs to curation/service.py calls, format with
curation/views.py. `endpoints(services)` returns them by name; studio/ui.py wires them.

Key actions (rate, undo, navigate, goto, note) never raise: a failure comes back as a
message in the view, so the browser leaves its "Saving…" state and says what went wrong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ParamSpec, TypeVar

import gradio as gr

from curation import grid, service, views
from curation.agreement import agreement_report
from curation.commands import parse_command
from curation.filter_form import (
    ANY,
    MEASURES,
    filter_form,
    gate_choices,
    measure_values,
    parse_form,
    parse_measures,
    sort_choices,
)
from curation.ratings import latest_rating
from curation.service import RatingRequest, Services
from curation.viewer import sees_everyone, viewer_ids
from refpool.core.errors import RefpoolError

P = ParamSpec("P")
R = TypeVar("R")
FILTER_CONTROLS = ("photo", "model", "round", "tier", "rated_by", "ladder")


def _who(services: Services, claimed: str | None, request: gr.Request | None) -> str:
    username = getattr(request, "username", None) if request is not None else None
    return service.resolve_curator(services, claimed, username)


def _moved(services: Services, who: str, request: gr.Request | None, html: str) -> str:
    """Remember which page last moved this curator's cursor (see service.rate's refusal)."""
    tab = getattr(request, "session_hash", None) if request is not None else None
    if tab:
        services.cursor_tab[who] = tab
    return html


def _int(value: float | str | None) -> int | None:
    """A component's value as an id or page number; None when empty or not a number."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _cid(services: Services, who: str, value: float | str | None) -> int | None:
    """The candidate a page names: a blind curator's page sends their token for it."""
    number = _int(value)
    tokens = viewer_ids(services.store, who, services.settings.blind)
    if tokens is None or number is None:
        return number
    return tokens.candidate(services.store, number)


def _seen(services: Services, who: str, cid: int | None, value: float | None) -> int | None:
    """The rating row the page saw; a blind page sends a token for it (or 0: none)."""
    number = _int(value)
    tokens = viewer_ids(services.store, who, services.settings.blind)
    if tokens is None or cid is None or number is None or number <= 0:
        return number
    before = latest_rating(services.store, cid, who)
    return before.id if before and before.id and tokens.seen_token(before.id) == number else 0


def _safe(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn a bad request into a Gradio error (shown as a toast) instead of a stack trace."""

    @functools.wraps(fn)  # keeps the signature: Gradio injects gr.Request by annotation
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except RefpoolError as exc:
            raise gr.Error(views.refusal_text(exc)) from exc

    return wrapper


def guarded(fn: Callable[[], str]) -> str:
    """A key action's view, or the failure as a message in the view."""
    try:
        return fn()
    except RefpoolError as exc:
        return views.error_view(views.refusal_text(exc))
    except Exception as exc:  # noqa: BLE001 - shown to the curator, never swallowed silently
        return views.error_view(f"The studio failed: {type(exc).__name__}: {exc}. Try again.")


def filter_updates(services: Services, who: str | None) -> list[Any]:
    """The filter controls' per-session state: current choices and the stored filters.

    Nothing here is in the page's initial config (Gradio sends that before login).
    """
    if who is None:
        empty = [gr.Dropdown(choices=[ANY], value=ANY) for _ in FILTER_CONTROLS] + [False, False]
        return empty + measure_updates(services, None)
    form = filter_form(services, who)
    return [
        *(gr.Dropdown(choices=getattr(form, c), value=form.values[c]) for c in FILTER_CONTROLS),
        form.unrated_only,
        form.disagreements,
        *measure_updates(services, who),
    ]


def measure_updates(services: Services, who: str | None) -> list[Any]:
    """Search, gate, coverage, critic score, win rate and sort: this curator's stored values."""
    filters = service.q.Filters()
    if who is not None:
        filters = service.clean_filters(services, service.q.load_session(services.store, who)[1])
    values = measure_values(filters)
    out: list[Any] = list(values)
    out[MEASURES.index("gate")] = gr.Dropdown(choices=gate_choices(), value=values[1])
    sorts = sort_choices(services.settings.blind)
    out[MEASURES.index("sort")] = gr.Dropdown(choices=sorts, value=values[-1])
    return out


def endpoints(services: Services) -> dict[str, Callable[..., Any]]:
    """Every handler, by the name ui.py wires it under."""
    settings = services.settings

    def show(curator: str, request: gr.Request) -> str:
        """The current candidate for this curator (resumes the stored cursor)."""

        def act() -> str:
            who = _who(services, curator, request)
            return _moved(services, who, request, views.screen_html(service.screen(services, who)))

        return guarded(act)

    def rate(command: str, curator: str, request: gr.Request) -> str:
        """Apply one rating command (JSON, made by the page for one key: curation/commands.py)
        and return the next view, which says what became of it (data-outcome)."""

        def act() -> str:
            who = _who(services, curator, request)
            cmd = parse_command(command)
            # a blind page names the painting by this curator's token for it (blind_ids.py)
            cid = _cid(services, who, cmd.candidate_id) or cmd.candidate_id
            # the id sent is the one on screen when the key was pressed, with that view's
            # token: the server refuses it unless this curator was shown it and the queue is
            # there; a command already saved is acknowledged, not saved again
            rating = RatingRequest(
                curator=who,
                candidate_id=cid,
                tier=cmd.tier,
                note=cmd.note,
                seen=_seen(services, who, cid, cmd.seen),
                expected=cid,
                tab=getattr(request, "session_hash", None),
                command_id=cmd.command_id,
                token=cmd.token,
            )
            s = service.rate_request(services, rating)
            s.command = cmd.command_id
            return _moved(services, who, request, views.screen_html(s))

        return guarded(act)

    def undo(curator: str, request: gr.Request) -> str:
        """Undo this curator's latest rating (repeat for several levels)."""

        def act() -> str:
            who = _who(services, curator, request)
            return _moved(services, who, request, views.screen_html(service.undo(services, who)))

        return guarded(act)

    def navigate(
        candidate_id: float | None, delta: float, curator: str, request: gr.Request
    ) -> str:
        """Move through the queue: delta 1 = next, -1 = previous."""

        def act() -> str:
            who = _who(services, curator, request)
            s = service.navigate(services, who, _cid(services, who, candidate_id), int(delta or 1))
            return _moved(services, who, request, views.screen_html(s))

        return guarded(act)

    def goto(candidate_id: float | None, curator: str, request: gr.Request) -> tuple[str, gr.Tabs]:
        """Open one candidate in the big view."""

        def act() -> str:
            who = _who(services, curator, request)
            cid = _cid(services, who, candidate_id)
            s = service.goto(services, who, cid) if cid else service.screen(services, who)
            return _moved(services, who, request, views.screen_html(s))

        return guarded(act), gr.Tabs(selected="rate")

    def note(candidate_id: float | None, text: str, curator: str, request: gr.Request) -> str:
        """Attach a note to this curator's rating of the candidate on screen. The reply never
        writes the note box (the curator may be typing the next note): the page keeps it."""

        def act() -> str:
            who = _who(services, curator, request)
            cid = _cid(services, who, candidate_id)
            if cid is None:
                return views.screen_html(service.screen(services, who))
            s = service.note(services, who, cid, text or "")
            return _moved(services, who, request, views.screen_html(s))

        return guarded(act)

    @_safe
    def apply_filters(
        photo: str,
        model: str,
        round_: str,
        tier: str,
        rated_by: str,
        ladder: str,
        unrated_only: bool,
        disagreements: bool,
        curator: str,
        request: gr.Request,
        note_text: str = "",
        gate: str = ANY,
        coverage_min: float | None = None,
        coverage_max: float | None = None,
        critic_min: float | None = None,
        win_min: float | None = None,
        sort: str = ANY,
    ) -> list[Any]:
        """Set this curator's queue filters (stored, so they survive a reload): the
        dropdowns, then search, gate, coverage range, critic score, win rate and sort."""
        who = _who(services, curator, request)
        f = parse_form(photo, model, round_, tier, rated_by, ladder, unrated_only, disagreements)
        measures = (note_text, gate, coverage_min, coverage_max, critic_min, win_min, sort)
        f = replace(f, **parse_measures(*measures)).validate()
        html = _moved(
            services, who, request, views.screen_html(service.set_filters(services, who, f))
        )
        return [html, *filter_updates(services, who)]

    @_safe
    def refresh_filters(curator: str, request: gr.Request) -> list[Any]:
        """Current filter choices (photos, models, who has rated) and the stored filters."""
        return filter_updates(services, _who(services, curator, request))

    @_safe
    def show_grid(page: float | None, curator: str, request: gr.Request) -> str:
        """A page of thumbnails for triage."""
        who = _who(services, curator, request)
        return views.grid_html(grid.show(services, who, _int(page) or 1))

    @_safe
    def rate_grid(
        ids: str, tier: str, page: float | None, curator: str, request: gr.Request
    ) -> str:
        """Rate several candidates (comma-separated ids) in one action."""
        who = _who(services, curator, request)
        # a blind page sends tokens; one that names nothing stays as sent (reported as gone)
        cids = [_cid(services, who, i) or i for i in grid.parse_ids(ids)]
        g = grid.rate(services, who, cids, str(tier), _int(page) or 1)
        return views.grid_html(g)

    @_safe
    def undo_grid(page: float | None, curator: str, request: gr.Request) -> str:
        """The Grid tab's undo: this curator's latest rating or grid batch."""
        who = _who(services, curator, request)
        return views.grid_html(grid.undo(services, who, _int(page) or 1))

    def agreement(curator: str, request: gr.Request) -> str:
        """Cohen's and Fleiss' kappa, confusion matrices, disagreements (blind: leads only)."""
        try:
            who = _who(services, curator, request)
        except RefpoolError as exc:
            return views.refusal_html(exc)
        hidden = not sees_everyone(services.store, who, settings.blind)
        tokens = viewer_ids(services.store, who, settings.blind)  # a lead rates blind too
        report = agreement_report(services.store)
        return views.agreement_html(report, hidden, tokens.token if tokens else None)

    def init(request: gr.Request) -> list[Any]:
        """On page load: who is curating (login, ?curator=, or the default), their view, and
        the filter controls' choices (filled only now: after login, for this session)."""
        claimed = request.query_params.get("curator") if request else None
        try:
            who = _who(services, claimed or settings.default_curator, request)
        except RefpoolError as exc:
            problem = (
                f"{views.refusal_text(exc)}. Open the studio with ?curator=NAME using a valid name."
            )
            return [claimed or "", views.error_view(problem), *filter_updates(services, None)]
        screen = guarded(
            lambda: _moved(services, who, request, views.screen_html(service.screen(services, who)))
        )
        return [who, screen, *filter_updates(services, who)]

    return {
        "init": init,
        "show": show,
        "rate": rate,
        "undo": undo,
        "navigate": navigate,
        "goto": goto,
        "note": note,
        "filters": apply_filters,
        "refresh_filters": refresh_filters,
        "grid": show_grid,
        "grid_rate": rate_grid,
        "grid_undo": undo_grid,
        "agreement": agreement,
    }
