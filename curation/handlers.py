"""The studio's endpoints: translate Gradio inputs to curation/studio.py calls, format with
curation/views.py. `endpoints(services)` returns them by name; curation/ui.py wires them.

Key actions (rate, undo, navigate, goto, note) never raise: a failure comes back as a
message in the view, so the browser leaves its "Saving…" state and says what went wrong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import gradio as gr

from curation import grid, studio, views
from curation.agreement import agreement_report
from curation.filter_form import ANY, filter_form, parse_form
from curation.studio import Services
from refpool.core.errors import RefpoolError

P = ParamSpec("P")
R = TypeVar("R")
FILTER_CONTROLS = ("photo", "model", "round", "tier", "rated_by", "ladder")


def _who(services: Services, claimed: str | None, request: gr.Request | None) -> str:
    username = getattr(request, "username", None) if request is not None else None
    return studio.resolve_curator(services, claimed, username)


def _moved(services: Services, who: str, request: gr.Request | None, html: str) -> str:
    """Remember which page last moved this curator's cursor (see studio.rate's refusal)."""
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
        return [gr.Dropdown(choices=[ANY], value=ANY) for _ in FILTER_CONTROLS] + [False, False]
    form = filter_form(services, who)
    return [
        *(gr.Dropdown(choices=getattr(form, c), value=form.values[c]) for c in FILTER_CONTROLS),
        form.unrated_only,
        form.disagreements,
    ]


def endpoints(services: Services) -> dict[str, Callable[..., Any]]:
    """Every handler, by the name ui.py wires it under."""
    settings = services.settings

    def show(curator: str, request: gr.Request) -> str:
        """The current candidate for this curator (resumes the stored cursor)."""

        def act() -> str:
            who = _who(services, curator, request)
            return _moved(services, who, request, views.screen_html(studio.screen(services, who)))

        return guarded(act)

    def rate(
        candidate_id: float | None,
        tier: str,
        note: str,
        curator: str,
        seen: float | None,
        request: gr.Request,
    ) -> tuple[str, str]:
        """Rate the candidate on screen love|okay|reject|skip; returns the next view."""
        kept = [note or ""]

        def act() -> str:
            who = _who(services, curator, request)
            cid = _int(candidate_id)
            if cid is None:
                nothing = studio.screen(services, who, None, "Nothing to rate here.", "warn")
                return views.screen_html(nothing)
            # the id sent is the one on screen when the key was pressed: the page expects the
            # queue to be there, and the server refuses the rating if it is not
            tab = getattr(request, "session_hash", None)
            s = studio.rate(
                services, who, cid, str(tier), note or "", _int(seen), expected=cid, tab=tab
            )
            if s.level in ("ok", "warn"):
                kept[0] = ""  # the note went with the rating
            return _moved(services, who, request, views.screen_html(s))

        return guarded(act), kept[0]

    def undo(curator: str, request: gr.Request) -> str:
        """Undo this curator's latest rating (repeat for several levels)."""

        def act() -> str:
            who = _who(services, curator, request)
            return _moved(services, who, request, views.screen_html(studio.undo(services, who)))

        return guarded(act)

    def navigate(
        candidate_id: float | None, delta: float, curator: str, request: gr.Request
    ) -> str:
        """Move through the queue: delta 1 = next, -1 = previous."""

        def act() -> str:
            who = _who(services, curator, request)
            s = studio.navigate(services, who, _int(candidate_id), int(delta or 1))
            return _moved(services, who, request, views.screen_html(s))

        return guarded(act)

    def goto(candidate_id: float | None, curator: str, request: gr.Request) -> tuple[str, gr.Tabs]:
        """Open one candidate in the big view."""

        def act() -> str:
            who = _who(services, curator, request)
            cid = _int(candidate_id)
            s = studio.goto(services, who, cid) if cid else studio.screen(services, who)
            return _moved(services, who, request, views.screen_html(s))

        return guarded(act), gr.Tabs(selected="rate")

    def note(
        candidate_id: float | None, text: str, curator: str, request: gr.Request
    ) -> tuple[str, str]:
        """Attach a note to this curator's rating of the candidate on screen."""
        kept = [text or ""]

        def act() -> str:
            who = _who(services, curator, request)
            cid = _int(candidate_id)
            if cid is None:
                return views.screen_html(studio.screen(services, who))
            s = studio.note(services, who, cid, text or "")
            if s.level == "ok":
                kept[0] = ""
            return _moved(services, who, request, views.screen_html(s))

        return guarded(act), kept[0]

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
    ) -> list[Any]:
        """Set this curator's queue filters (stored, so they survive a reload)."""
        who = _who(services, curator, request)
        f = parse_form(photo, model, round_, tier, rated_by, ladder, unrated_only, disagreements)
        html = _moved(
            services, who, request, views.screen_html(studio.set_filters(services, who, f))
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
        g = grid.rate(services, who, grid.parse_ids(ids), str(tier), _int(page) or 1)
        return views.grid_html(g)

    @_safe
    def undo_grid(page: float | None, curator: str, request: gr.Request) -> str:
        """The Grid tab's undo: this curator's latest rating or grid batch."""
        who = _who(services, curator, request)
        return views.grid_html(grid.undo(services, who, _int(page) or 1))

    def agreement() -> str:
        """Cohen's and Fleiss' kappa, confusion matrices, disagreements."""
        return views.agreement_html(agreement_report(services.store), settings.blind)

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
            lambda: _moved(services, who, request, views.screen_html(studio.screen(services, who)))
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
