"""The rating studio's Gradio wiring: `build_studio(services, extra_tabs) -> gr.Blocks`.

app.py composes it with the later stages' tabs (`build_app`) and launches it.

The handlers are in studio/handlers.py. Keys live in static/studio.js: it queues each key
with the candidate on screen when it was pressed and sends them one at a time. A rating is a
command the page keeps in localStorage until the server acknowledges it and POSTs itself
(gradio_api/run/rate); the other keys click hidden buttons whose `js` hooks send what was
captured, so a key always applies to what the curator saw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TypedDict

import gradio as gr

from curation.files import static_dirs
from curation.filter_form import ANY
from curation.service import NOTE_LIMIT, Services
from refpool.core.contracts import RATING_ACTIONS, SKIP
from studio.handlers import endpoints

STATIC = Path(__file__).parent / "static"
PAGE_SCRIPTS = ("studio.js", "everyday.js")  # run in this order: everyday.js uses window.rp


def studio_js() -> str:
    """The page's script for launch(js=...): one function that runs each of PAGE_SCRIPTS."""
    calls = "".join(f"({(STATIC / name).read_text('utf-8')})();\n" for name in PAGE_SCRIPTS)
    return "() => {\n" + calls + "}"


class Fast(TypedDict):
    """Event options for every studio action: no spinner, no queue, every keypress counts."""

    show_progress: Literal["hidden"]
    trigger_mode: Literal["multiple"]
    queue: bool


FAST = Fast(show_progress="hidden", trigger_mode="multiple", queue=False)

# The rating actions come from the one vocabulary; static/studio.js reads its number keys
# (data-rp-key: 1 love ... 4 skip, space too for skip) from these buttons, never its own list.
RATE_BAR = (
    '<div class="rp-actions">'
    + "".join(
        f'<button data-rp-act="{t}" data-rp-key="{i}{" space" if t == SKIP else ""}">{i} {t}'
        "</button>"
        for i, t in enumerate(RATING_ACTIONS, 1)
    )
    + '<button data-rp-act="undo">z undo</button></div>'
)
GRID_BAR = (
    '<div class="rp-gridbar">'
    + "".join(f'<button data-rp-grid="{t}">{t.title()} selected</button>' for t in RATING_ACTIONS)
    + '<button data-rp-grid="undo">Undo last</button>'
    '<button data-rp-grid="all">Select page</button>'
    '<button data-rp-grid="none">Clear selection</button></div>'
)


def _dropdown(label: str, elem_id: str, visible: bool = True) -> gr.Dropdown:
    """A filter dropdown offering only "(any)" until the load event fills it, after login.

    Choices differ per session, so the server checks values itself (filter_form.parse_form).
    """
    return gr.Dropdown(
        [ANY],
        value=ANY,
        label=label,
        visible=visible,
        allow_custom_value=True,
        elem_id=elem_id,
        min_width=120,
    )


def _measure_controls(blind: bool) -> list[gr.components.Component]:
    """Search notes, the gate, a coverage range, the critic's score, the win rate and a sort
    (curation/refine.py). A blind studio has no control for what a model produced."""
    with gr.Row(elem_id="rp-measure-row"):
        return [
            gr.Textbox("", label="Note contains", elem_id="rp-f-note", min_width=160),
            _dropdown("Gate", "rp-f-gate"),
            gr.Number(label="Coverage ≥", elem_id="rp-f-cov-min", minimum=0, maximum=1),
            gr.Number(label="Coverage ≤", elem_id="rp-f-cov-max", minimum=0, maximum=1),
            gr.Number(
                label="Critic score ≥",
                elem_id="rp-f-critic",
                minimum=0,
                maximum=10,
                visible=not blind,
            ),
            gr.Number(
                label="Win rate ≥", elem_id="rp-f-win", minimum=0, maximum=1, visible=not blind
            ),
            _dropdown("Sort", "rp-f-sort"),
        ]


def build_studio(
    services: Services, extra_tabs: Sequence[Callable[[Services], None]] = ()
) -> gr.Blocks:
    """The rating studio's Blocks; each of `extra_tabs` adds a tab inside its `gr.Tabs`.

    Nothing naming a curator, photo, model or candidate is put into a component at build
    time: Gradio embeds the components' config in the page even before login, so the
    filter choices and the curator's name are filled by the load event, per session.
    """
    settings = services.settings
    gr.set_static_paths([str(p) for p in static_dirs(services.store)])
    h = endpoints(services)

    # -- layout ------------------------------------------------------------------------------
    blind = settings.blind
    # fill_width: on a wide screen the studio uses the width, not a centred 60 % column
    with gr.Blocks(title="refpool studio", fill_width=True) as demo:
        # one short header line, so the painting fits a laptop screen below it
        with gr.Row(elem_id="rp-head", equal_height=True):
            gr.Markdown(
                "### refpool studio"
                + (" · blind mode" if blind else "")
                + " · curator"
                + (" (logged in)" if settings.auth else ""),
                elem_id="rp-title",
            )
            curator = gr.Textbox(
                value="" if settings.auth else settings.default_curator,
                label="Curator" + (" (logged in)" if settings.auth else ""),
                show_label=False,
                container=False,
                placeholder="your curator name",
                interactive=not settings.auth,
                elem_id="rp-curator",
                scale=1,
            )
            if settings.auth:  # a POST from this page: the studio refuses GET /logout
                gr.Button("Log out", elem_id="rp-logout", scale=0, size="sm").click(
                    None, js="() => fetch('logout', {method: 'POST'}).then(() => location.reload())"
                )
        # one row: open, the filters still leave the painting room on a laptop screen
        with (
            gr.Accordion("Queue filters", open=False) as filters_box,
            gr.Row(elem_id="rp-filter-row"),
        ):
            f_photo = _dropdown("Photo", "rp-f-photo")
            f_model = _dropdown("Model", "rp-f-model", visible=not blind)
            f_round = _dropdown("Round", "rp-f-round")
            f_tier = _dropdown("Final tier", "rp-f-tier", visible=not blind)
            f_rated = _dropdown("Rated by", "rp-f-rated", visible=not blind)
            f_ladder = _dropdown("Ladder (calibration)", "rp-f-ladder", visible=not blind)
            with gr.Column(min_width=210, scale=1):
                f_unrated = gr.Checkbox(
                    False,
                    label="Only ones I have not rated",
                    elem_id="rp-f-unrated",
                    container=False,
                )
                f_dis = gr.Checkbox(
                    False, label="Only disagreements", visible=not blind, container=False
                )
            # folded, in this row: opening the filters still leaves the painting its room
            with gr.Accordion("More", open=False, elem_id="rp-f-more"):
                measure_controls = _measure_controls(blind)
            f_apply = gr.Button("Apply filters", elem_id="rp-apply-filters", scale=0, min_width=110)
        filter_controls = [f_photo, f_model, f_round, f_tier, f_rated, f_ladder, f_unrated, f_dis]
        with gr.Tabs(selected="rate") as tabs:
            with gr.Tab("Rate", id="rate"):
                # the rating buttons and the note sit above the render: above the fold at 1366x768
                with gr.Row(elem_id="rp-rate-row", equal_height=True):
                    gr.HTML(RATE_BAR, elem_id="rp-actions-wrap", scale=3)
                    note_box = gr.Textbox(
                        label="Note",
                        show_label=False,
                        container=False,
                        placeholder="Note: n to focus, Enter to save (sent with your next rating)",
                        elem_id="rp-note",
                        lines=1,
                        max_length=NOTE_LIMIT,
                        scale=2,
                    )
                view = gr.HTML(elem_id="rp-view-wrap")
            with gr.Tab("Grid", id="grid") as grid_tab:
                with gr.Row():
                    page = gr.Number(
                        1, label="Page", precision=0, minimum=1, elem_id="rp-page", scale=0
                    )
                    page_btn = gr.Button("Show page", elem_id="rp-page-btn", scale=0)
                gr.HTML(GRID_BAR, elem_id="rp-gridbar-wrap")  # sticky: in view over 48 tiles
                grid_view = gr.HTML(elem_id="rp-grid-wrap")
            with gr.Tab("Agreement", id="agreement") as agree_tab:
                agree_btn = gr.Button("Refresh", elem_id="rp-agree-btn")
                agree_view = gr.HTML(elem_id="rp-agree-wrap")
            for add_tab in extra_tabs:  # e.g. the Pool tab, added by app.py
                add_tab(services)

        # Hidden plumbing for the key handler ("hidden" keeps them in the DOM for the JS).
        cid_in = gr.Number(elem_id="rp-cid", visible="hidden")
        tier_in = gr.Textbox(elem_id="rp-tier", visible="hidden")
        command_in = gr.Textbox(elem_id="rp-command", visible="hidden")
        delta_in = gr.Number(elem_id="rp-delta", visible="hidden")
        ids_in = gr.Textbox(elem_id="rp-ids", visible="hidden")
        rate_btn = gr.Button("rate", elem_id="rp-rate-btn", visible="hidden")
        undo_btn = gr.Button("undo", elem_id="rp-undo-btn", visible="hidden")
        nav_btn = gr.Button("navigate", elem_id="rp-nav-btn", visible="hidden")
        goto_btn = gr.Button("goto", elem_id="rp-goto-btn", visible="hidden")
        note_btn = gr.Button("note", elem_id="rp-note-btn", visible="hidden")
        grid_rate_btn = gr.Button("grid_rate", elem_id="rp-grid-rate-btn", visible="hidden")
        grid_undo_btn = gr.Button("grid_undo", elem_id="rp-grid-undo-btn", visible="hidden")

        # The `js` hooks send what the key handler captured when the key was pressed
        # (rp.sent: the candidate then on screen, the tier, the note; see static/studio.js).
        filter_outputs = [*filter_controls, *measure_controls]
        demo.load(h["init"], None, [curator, view, *filter_outputs], api_name="init", **FAST)
        curator.submit(h["show"], [curator], [view], api_name="show", **FAST).then(
            h["refresh_filters"], [curator], filter_outputs, api_visibility="private", **FAST
        )
        # Ratings are commands the page keeps until acknowledged and POSTs itself to
        # gradio_api/run/rate (static/studio.js), so it sees every failure and can send again.
        rate_btn.click(h["rate"], [command_in, curator], [view], api_name="rate", **FAST)
        undo_btn.click(h["undo"], [curator], [view], api_name="undo", **FAST)
        nav_btn.click(
            h["navigate"],
            [cid_in, delta_in, curator],
            [view],
            api_name="navigate",
            js="(c, d, who) => [rp.sent.cid, rp.sent.delta, who]",
            **FAST,
        )
        goto_btn.click(
            h["goto"],
            [cid_in, curator],
            [view, tabs],
            api_name="goto",
            js="(c, who) => [rp.sent.goto, who]",
            **FAST,
        )
        note_btn.click(
            h["note"],
            [cid_in, note_box, curator],
            [view],  # never the note box: the curator may be typing in it
            api_name="note",
            js="(c, n, who) => [rp.sent.cid, rp.sent.note, who]",
            **FAST,
        )
        f_apply.click(
            h["filters"],
            [*filter_controls, curator, *measure_controls],
            [view, *filter_outputs],
            api_name="filters",
            **FAST,
        )
        filters_box.expand(
            h["refresh_filters"], [curator], filter_outputs, api_visibility="private", **FAST
        )
        grid_tab.select(h["grid"], [page, curator], [grid_view], api_name="grid", **FAST)
        page_btn.click(h["grid"], [page, curator], [grid_view], api_visibility="private", **FAST)
        grid_rate_btn.click(
            h["grid_rate"],
            [ids_in, tier_in, page, curator],
            [grid_view],
            api_name="grid_rate",
            js="(i, t, p, who) => [rp.selected(), rp.gridTier, p, who]",
            **FAST,
        )
        grid_undo_btn.click(
            h["grid_undo"], [page, curator], [grid_view], api_name="grid_undo", **FAST
        )
        agree_tab.select(h["agreement"], [curator], [agree_view], api_name="agreement", **FAST)
        agree_btn.click(h["agreement"], [curator], [agree_view], api_visibility="private", **FAST)
    return demo
