"""The rating studio's Gradio wiring: `build_studio(services, extra_tabs) -> gr.Blocks`.

app.py composes it with the later stages' tabs (`build_app`) and launches it.

Handlers only translate between components and curation/studio.py (curation/grid.py for
the Grid tab), and format with curation/views.py. Keys live in static/studio.js: they click
hidden buttons whose `js` hook reads the candidate on screen, so a rating always applies to
what the curator saw.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, ParamSpec, TypedDict, TypeVar

import gradio as gr

from curation import grid, studio, views
from curation.agreement import agreement_report
from curation.curators import list_curators
from curation.files import static_dirs
from curation.queue import Filters
from curation.studio import Services
from refpool.store import candidates
from refpool.store.photos import list_photos

STATIC = Path(__file__).parent / "static"
ANY = "(any)"
P = ParamSpec("P")
R = TypeVar("R")


class Fast(TypedDict):
    """Event options for every studio action: no spinner, no queue, every keypress counts."""

    show_progress: Literal["hidden"]
    trigger_mode: Literal["multiple"]
    queue: bool


FAST = Fast(show_progress="hidden", trigger_mode="multiple", queue=False)

RATE_BAR = (
    '<div class="rp-actions">'
    '<button data-rp-act="love">1 love</button><button data-rp-act="okay">2 okay</button>'
    '<button data-rp-act="reject">3 reject</button><button data-rp-act="skip">4 skip</button>'
    '<button data-rp-act="undo">z undo</button></div>'
)
GRID_BAR = (
    '<div class="rp-gridbar">'
    '<button data-rp-grid="love">Love selected</button>'
    '<button data-rp-grid="okay">Okay selected</button>'
    '<button data-rp-grid="reject">Reject selected</button>'
    '<button data-rp-grid="skip">Skip selected</button>'
    '<button data-rp-grid="all">Select page</button>'
    '<button data-rp-grid="none">Clear selection</button></div>'
)


def _who(services: Services, claimed: str | None, request: gr.Request | None) -> str:
    username = getattr(request, "username", None) if request is not None else None
    return studio.resolve_curator(services, claimed, username)


def _int(value: float | str | None) -> int | None:
    """A component's value as an id or page number; None when empty or not a number."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _safe(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn a bad request into a message in the view instead of a stack trace."""

    @functools.wraps(fn)  # keeps the signature: Gradio injects gr.Request by annotation
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (ValueError, PermissionError) as exc:
            raise gr.Error(str(exc)) from exc

    return wrapper


def filter_choices(services: Services) -> dict[str, list[str]]:
    store = services.store
    return {
        "photo": [f"{p.id}: {p.file_name}" for p in list_photos(store)],
        "model": candidates.generators(store),
        "round": [str(r) for r in candidates.rounds(store)],
        "curator": [c["name"] for c in list_curators(store)],
    }


def build_studio(
    services: Services, extra_tabs: Sequence[Callable[[Services], None]] = ()
) -> gr.Blocks:
    """The rating studio's Blocks; each of `extra_tabs` adds a tab inside its `gr.Tabs`."""
    settings = services.settings
    gr.set_static_paths([str(p) for p in static_dirs(services.store)])

    # -- handlers (each one is an API endpoint; gradio_client reaches them by api_name) ----
    @_safe
    def show(curator: str, request: gr.Request) -> str:
        """The current candidate for this curator (resumes the stored cursor)."""
        return views.screen_html(studio.screen(services, _who(services, curator, request)))

    @_safe
    def rate(
        candidate_id: float | None,
        tier: str,
        note: str,
        curator: str,
        seen: float | None,
        request: gr.Request,
    ) -> tuple[str, str]:
        """Rate the candidate on screen love|okay|reject|skip; returns the next view."""
        who = _who(services, curator, request)
        cid = _int(candidate_id)
        if cid is None:
            nothing = studio.screen(services, who, None, "Nothing to rate here.", "warn")
            return views.screen_html(nothing), note
        s = studio.rate(services, who, cid, str(tier), note or "", _int(seen))
        return views.screen_html(s), "" if s.level in ("ok", "warn") else note

    @_safe
    def undo(curator: str, request: gr.Request) -> str:
        """Undo this curator's latest rating (repeat for several levels)."""
        return views.screen_html(studio.undo(services, _who(services, curator, request)))

    @_safe
    def navigate(
        candidate_id: float | None, delta: float, curator: str, request: gr.Request
    ) -> str:
        """Move through the queue: delta 1 = next, -1 = previous."""
        who = _who(services, curator, request)
        s = studio.navigate(services, who, _int(candidate_id), int(delta or 1))
        return views.screen_html(s)

    @_safe
    def goto(candidate_id: float | None, curator: str, request: gr.Request) -> tuple[str, gr.Tabs]:
        """Open one candidate in the big view."""
        who = _who(services, curator, request)
        cid = _int(candidate_id)
        s = studio.goto(services, who, cid) if cid else studio.screen(services, who)
        return views.screen_html(s), gr.Tabs(selected="rate")

    @_safe
    def note(
        candidate_id: float | None, text: str, curator: str, request: gr.Request
    ) -> tuple[str, str]:
        """Attach a note to this curator's rating of the candidate on screen."""
        who = _who(services, curator, request)
        cid = _int(candidate_id)
        if cid is None:
            return views.screen_html(studio.screen(services, who)), text
        s = studio.note(services, who, cid, text or "")
        return views.screen_html(s), "" if s.level == "ok" else text

    @_safe
    def apply_filters(
        photo: str,
        model: str,
        round_: str,
        tier: str,
        rated_by: str,
        unrated_only: bool,
        disagreements: bool,
        curator: str,
        request: gr.Request,
    ) -> str:
        """Set this curator's queue filters (stored, so they survive a reload)."""
        who = _who(services, curator, request)

        def pick(value: str | None) -> str | None:
            return None if value in (None, "", ANY) else value

        f = Filters(
            photo_id=_int(str(pick(photo) or "").split(":")[0]),
            generator=pick(model),
            round=_int(pick(round_)),
            tier=pick(tier),
            curator=pick(rated_by),
            unrated_only=bool(unrated_only),
            disagreements=bool(disagreements),
        )
        return views.screen_html(studio.set_filters(services, who, f))

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

    def agreement() -> str:
        """Cohen's and Fleiss' kappa, confusion matrices, disagreements."""
        return views.agreement_html(agreement_report(services.store), settings.blind)

    def init(request: gr.Request) -> tuple[str, str]:
        """On page load: who is curating (login, ?curator=, or the default) and their view."""
        claimed = request.query_params.get("curator") if request else None
        who = _who(services, claimed or settings.default_curator, request)
        return who, views.screen_html(studio.screen(services, who))

    # -- layout ------------------------------------------------------------------------------
    choices = filter_choices(services)
    blind = settings.blind
    with gr.Blocks(title="refpool studio") as demo:
        with gr.Row():
            curator = gr.Textbox(
                value=settings.default_curator,
                label="Curator" + (" (logged in)" if settings.auth else ""),
                interactive=not settings.auth,
                elem_id="rp-curator",
                scale=1,
            )
            gr.Markdown("### refpool studio" + (" · blind mode" if blind else ""))
        with gr.Accordion("Queue filters", open=False):
            with gr.Row():
                f_photo = gr.Dropdown([ANY, *choices["photo"]], value=ANY, label="Photo")
                f_model = gr.Dropdown(
                    [ANY, *choices["model"]], value=ANY, label="Model", visible=not blind
                )
                f_round = gr.Dropdown([ANY, *choices["round"]], value=ANY, label="Round")
                f_tier = gr.Dropdown(
                    [ANY, "love", "okay", "reject", "unrated"], value=ANY, label="Final tier"
                )
                f_rated = gr.Dropdown(
                    [ANY, *choices["curator"]], value=ANY, label="Rated by", visible=not blind
                )
            with gr.Row():
                f_unrated = gr.Checkbox(False, label="Only candidates I have not rated")
                f_dis = gr.Checkbox(False, label="Only disagreements", visible=not blind)
                f_apply = gr.Button("Apply filters", elem_id="rp-apply-filters")
        with gr.Tabs(selected="rate") as tabs:
            with gr.Tab("Rate", id="rate"):
                view = gr.HTML(elem_id="rp-view-wrap")
                gr.HTML(RATE_BAR)
                note_box = gr.Textbox(
                    label="Note (n to focus, Enter to save; sent with your next rating)",
                    elem_id="rp-note",
                    lines=1,
                )
            with gr.Tab("Grid", id="grid") as grid_tab:
                with gr.Row():
                    page = gr.Number(
                        1, label="Page", precision=0, minimum=1, elem_id="rp-page", scale=0
                    )
                    page_btn = gr.Button("Show page", elem_id="rp-page-btn", scale=0)
                gr.HTML(GRID_BAR)
                grid_view = gr.HTML(elem_id="rp-grid-wrap")
            with gr.Tab("Agreement", id="agreement") as agree_tab:
                agree_btn = gr.Button("Refresh", elem_id="rp-agree-btn")
                agree_view = gr.HTML(elem_id="rp-agree-wrap")
            for add_tab in extra_tabs:  # e.g. the Pool tab, added by app.py
                add_tab(services)

        # Hidden plumbing for the key handler ("hidden" keeps them in the DOM for the JS).
        cid_in = gr.Number(elem_id="rp-cid", visible="hidden")
        tier_in = gr.Textbox(elem_id="rp-tier", visible="hidden")
        seen_in = gr.Number(elem_id="rp-seen", visible="hidden")
        delta_in = gr.Number(elem_id="rp-delta", visible="hidden")
        ids_in = gr.Textbox(elem_id="rp-ids", visible="hidden")
        rate_btn = gr.Button("rate", elem_id="rp-rate-btn", visible="hidden")
        undo_btn = gr.Button("undo", elem_id="rp-undo-btn", visible="hidden")
        nav_btn = gr.Button("navigate", elem_id="rp-nav-btn", visible="hidden")
        goto_btn = gr.Button("goto", elem_id="rp-goto-btn", visible="hidden")
        note_btn = gr.Button("note", elem_id="rp-note-btn", visible="hidden")
        grid_rate_btn = gr.Button("grid_rate", elem_id="rp-grid-rate-btn", visible="hidden")

        # The `js` hooks replace the inputs with what is on screen (see static/studio.js).
        demo.load(init, None, [curator, view], api_name="init", **FAST)
        curator.submit(show, [curator], [view], api_name="show", **FAST)
        rate_btn.click(
            rate,
            [cid_in, tier_in, note_box, curator, seen_in],
            [view, note_box],
            api_name="rate",
            js="(c, t, n, who, s) => [rp.sent.cid, rp.tier, n, who, rp.sent.seen]",
            **FAST,
        )
        undo_btn.click(undo, [curator], [view], api_name="undo", **FAST)
        nav_btn.click(
            navigate,
            [cid_in, delta_in, curator],
            [view],
            api_name="navigate",
            js="(c, d, who) => [rp.sent.cid, rp.delta, who]",
            **FAST,
        )
        goto_btn.click(
            goto,
            [cid_in, curator],
            [view, tabs],
            api_name="goto",
            js="(c, who) => [rp.goto, who]",
            **FAST,
        )
        note_btn.click(
            note,
            [cid_in, note_box, curator],
            [view, note_box],
            api_name="note",
            js="(c, n, who) => [rp.sent.cid, n, who]",
            **FAST,
        )
        f_apply.click(
            apply_filters,
            [f_photo, f_model, f_round, f_tier, f_rated, f_unrated, f_dis, curator],
            [view],
            api_name="filters",
            **FAST,
        )
        grid_tab.select(show_grid, [page, curator], [grid_view], api_name="grid", **FAST)
        page_btn.click(show_grid, [page, curator], [grid_view], api_visibility="private", **FAST)
        grid_rate_btn.click(
            rate_grid,
            [ids_in, tier_in, page, curator],
            [grid_view],
            api_name="grid_rate",
            js="(i, t, p, who) => [rp.selected(), rp.tier, p, who]",
            **FAST,
        )
        agree_tab.select(agreement, None, [agree_view], api_name="agreement", **FAST)
        agree_btn.click(agreement, None, [agree_view], api_visibility="private", **FAST)
    return demo
