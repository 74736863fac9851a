"""The studio's Pool tab: build a draft the way `refpool pool build` does, save it, and write
its diversity report under $REFPOOL_HOME/reports/.

Plain functions first (`build_draft`, then `pool_html` / `pool_report_html` to format), then
`add_pool_tab`, the Gradio wiring that app.py's `build_app` adds to the studio. Selection and
metrics live in pool/: nothing here recomputes them. A blind studio builds no draft at all
(`build_draft` says why): a draft is everyone's ratings combined, with the models and the
reasons behind them, so there is nothing here to mask.
"""

from __future__ import annotations

import math
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from curation.files import report_name, report_url
from curation.service import Services
from curation.views import count_table, message_html, refusal_text
from pool.catalog import load_entries
from pool.diversity.analysis import analyse, headline
from pool.diversity.report import render_html
from pool.reward.view import reward_section
from pool.selection.draft import (
    DEFAULT_DUP_THRESHOLD,
    DEFAULT_LOVE_FRACTION,
    REASONS,
    PoolDraft,
    SelectionError,
    build_pool,
    check_count,
    save_draft,
)
from refpool.core.errors import InputError, RefpoolError
from refpool.core.html import esc
from refpool.core.store import Store, candidates

EXAMPLES_PER_REASON = 5
BLIND_REFUSAL = (
    "Pool drafts are not built in blind mode: a draft combines every curator's ratings."
    " Build it from a studio started without --blind, or with `refpool pool build`."
)


@dataclass
class LeftOut:
    """The candidates left out for one reason."""

    reason: str  # a key of pool.selection.draft.REASONS
    label: str  # REASONS[reason]
    count: int
    examples: list[tuple[int, str]]  # (candidate id, reason text), the first few


@dataclass
class DraftReport:
    html_path: Path
    url: str  # where the page links it for download: by draft id, never a server path
    html: str  # the self-contained report, to embed
    headline: list[tuple[str, object]]  # (metric, value) as in the report's summary table


@dataclass
class PoolView:
    """What the Pool tab shows after "Build draft"."""

    message: str
    level: str = "info"  # info | ok | warn | error
    draft_id: int | None = None
    total: int = 0
    love: int = 0
    okay: int = 0
    target: int = 0
    per_photo: dict[str, int] = field(default_factory=dict)
    per_model: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    report: DraftReport | None = None
    report_problem: str = ""


def reports_dir(store: Store) -> Path:
    """Where the studio writes draft reports (served for download, like renders)."""
    out = store.home / "reports"
    out.mkdir(parents=True, exist_ok=True)
    return out


def check_inputs(
    target: object, love_fraction: object, max_per_photo: object, max_per_model: object
) -> tuple[int, float, int | None, int | None]:
    """Parse the tab's inputs; a RefpoolError says which one is wrong and what is allowed.

    A cap of 0 or empty means no cap (an empty Gradio number arrives as 0).
    """

    def number(value: object, name: str, allowed: str) -> float | None:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        try:
            x = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            x = math.nan
        if not math.isfinite(x):
            raise InputError(f"{name} must be {allowed}, not {value!r}")
        return x

    def whole(value: object, name: str, optional: bool) -> int | None:
        allowed = "a whole number of at least " + ("0 (0: no cap)" if optional else "1")
        x = number(value, name, allowed)
        if x is None or (optional and x == 0):
            if optional:
                return None
            raise InputError(f"{name} is empty: enter {allowed}")
        if x != int(x) or x < 1:
            raise InputError(f"{name} must be {allowed}, not {value!r}")
        check_count(name, x)
        return int(x)

    tgt = whole(target, "Target size", optional=False)
    love = number(love_fraction, "Love fraction", "a number from 0 to 1")
    love = DEFAULT_LOVE_FRACTION if love is None else love
    if not 0.0 <= love <= 1.0:
        raise InputError(f"Love fraction must be a number from 0 to 1, not {love_fraction!r}")
    return (
        int(tgt or 0),
        love,
        whole(max_per_photo, "Max per photo", optional=True),
        whole(max_per_model, "Max per model", optional=True),
    )


def group_left_out(draft: PoolDraft, per_reason: int = EXAMPLES_PER_REASON) -> list[LeftOut]:
    """Left-out candidates by reason, most common first, each with its whole detail."""
    groups = []
    for reason, items in sorted(draft.reasons().items(), key=lambda kv: (-len(kv[1]), kv[0])):
        examples = [(e.candidate_id, e.detail) for e in items[:per_reason]]
        groups.append(LeftOut(reason, REASONS.get(reason, reason), len(items), examples))
    return groups


def write_draft_report(
    services: Services, draft: PoolDraft, draft_id: int, threshold: float = DEFAULT_DUP_THRESHOLD
) -> DraftReport:
    """Analyse the draft (pool.diversity.analysis); write pool.diversity.report's HTML to reports/draft-<id>.html."""
    store = services.store
    label = f"draft {draft_id}"
    a = analyse(store, draft.tiers, label=label, threshold=threshold)
    # never called for a blind studio (it builds no draft); the ladder and the judge's
    # agreement with the curators, as in `refpool report`
    reward = reward_section(store, a.ids)[0]
    html = render_html(a, reward=reward)
    out = reports_dir(store) / report_name(draft_id)
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(html, "utf-8")
    os.replace(tmp, out)  # a reader never sees half a report
    return DraftReport(out, report_url(draft_id), html, headline(a.metrics))


def build_draft(
    services: Services,
    target: object,
    love_fraction: object = DEFAULT_LOVE_FRACTION,
    max_per_photo: object = None,
    max_per_model: object = None,
    dup_threshold: int = DEFAULT_DUP_THRESHOLD,
) -> PoolView:
    """Mirror `refpool pool build` (build, then save the draft), then write its report.

    Never raises for bad input or an empty store: the PoolView carries the message.
    A blind studio builds no draft: a draft is everyone's ratings combined (its counts, what
    is in it, why the rest was left out), which a blind curator may not see.
    """
    store, blind = services.store, services.settings.blind
    if blind:
        return PoolView(BLIND_REFUSAL, "warn")
    try:
        tgt, love, per_photo_cap, per_model_cap = check_inputs(
            target, love_fraction, max_per_photo, max_per_model
        )
    except RefpoolError as exc:
        return PoolView(refusal_text(exc), "error")
    try:
        draft = build_pool(
            store,
            target=tgt,
            max_per_photo=per_photo_cap,
            max_per_model=per_model_cap,
            love_fraction=love,
            dup_threshold=dup_threshold,
        )
    except SelectionError as exc:
        if candidates.count(store) == 0:
            text = (
                "The store has no candidates yet. Generate some first (for example"
                " `refpool demo`), rate them, then build the draft."
            )
        else:
            text = f"No draft: {refusal_text(exc)}"
        return PoolView(text, "warn", target=tgt)
    draft_id = save_draft(store, draft)
    entries = load_entries(store, draft.candidate_ids)
    per_photo: dict[str, int] = {}
    per_model: dict[str, int] = {}
    for cid in draft.candidate_ids:
        photo, generator = entries[cid].photo.file_name, entries[cid].candidate.generator
        per_photo[photo] = per_photo.get(photo, 0) + 1
        per_model[generator] = per_model.get(generator, 0) + 1
    view = PoolView(
        message=f"Draft {draft_id} saved: {len(draft.candidate_ids)} of {tgt} wanted"
        f" (love {draft.count('love')}, okay {draft.count('okay')}).",
        level="warn" if draft.warnings else "ok",
        draft_id=draft_id,
        total=len(draft.candidate_ids),
        love=draft.count("love"),
        okay=draft.count("okay"),
        target=tgt,
        per_photo=dict(sorted(per_photo.items(), key=lambda kv: (-kv[1], kv[0]))),
        per_model=dict(sorted(per_model.items(), key=lambda kv: (-kv[1], kv[0]))),
        warnings=list(draft.warnings),
        left_out=group_left_out(draft),
    )
    if not draft.candidate_ids:
        view.report_problem = "The draft is empty, so there is nothing to report on."
        return view
    try:
        view.report = write_draft_report(services, draft, draft_id, dup_threshold)
    except (RefpoolError, OSError) as exc:
        # The draft is saved either way; say why the report is missing and how to get it.
        why = refusal_text(exc) if isinstance(exc, RefpoolError) else str(exc)
        view.report_problem = (
            f"The diversity report could not be written: {why}. The draft is saved;"
            " `refpool report --draft --out report.html` retries it."
        )
    return view


# -- formatting ------------------------------------------------------------------------------
def pool_html(v: PoolView) -> str:
    """The draft: counts, warnings, and what was left out by reason (links open the candidate)."""
    out = f'<div id="rp-pool" data-draft="{v.draft_id or ""}">' + message_html(v.message, v.level)
    if v.draft_id is None:
        return out + "</div>"
    out += (
        '<table class="rp-table rp-pool-counts"><tr><th>in draft</th><th>love</th><th>okay</th>'
        f'<th>target</th></tr><tr><td id="rp-pool-total">{v.total}</td>'
        f'<td id="rp-pool-love">{v.love}</td><td id="rp-pool-okay">{v.okay}</td>'
        f"<td>{v.target}</td></tr></table>"
    )
    if v.warnings:
        warnings = "".join(f'<li class="rp-warn">{esc(w)}</li>' for w in v.warnings)
        out += f'<ul class="rp-pool-warnings">{warnings}</ul>'
    out += (
        '<div class="rp-pool-tables">'
        + count_table("photo", v.per_photo, "pool-photos")
        + count_table("model", v.per_model, "pool-models")
        + "</div>"
    )
    left = sum(g.count for g in v.left_out)
    out += f"<h4>Left out: {left}</h4>"
    for g in v.left_out:
        examples = "".join(
            f'<li><a href="#" data-rp-goto="{cid}">#{cid}</a> {esc(text)}</li>'
            for cid, text in g.examples
        )
        more = f"<li>… {g.count - len(g.examples)} more</li>" if g.count > len(g.examples) else ""
        out += (
            f'<details class="rp-leftout" data-reason="{esc(g.reason)}">'
            f'<summary>{esc(g.label)}: <b class="rp-leftout-n">{g.count}</b></summary>'
            f"<ul>{examples}{more}</ul></details>"
        )
    return out + "</div>"


def _metric(value: object) -> str:
    if value is None:
        return "n/a"
    return f"{value:g}" if isinstance(value, float) else esc(value)


def pool_report_html(v: PoolView) -> str:
    """Headline numbers, a download link, and the report itself in a sandboxed iframe."""
    if v.report is None:
        text = v.report_problem or "Build a draft to see its diversity report."
        return (
            '<div id="rp-pool-report">'
            + message_html(text, "warn" if v.report_problem else "info")
            + "</div>"
        )
    r = v.report
    rows = "".join(
        f"<tr><td>{esc(name)}</td><td>{_metric(value)}</td></tr>" for name, value in r.headline
    )
    # srcdoc is an attribute, so the whole document is escaped once; sandbox="" gives the
    # report no scripts, no forms and no access to the studio (it needs none of them).
    return (
        '<div id="rp-pool-report">'
        f'<table class="rp-table rp-pool-headline"><tr><th>metric</th><th>draft {v.draft_id}</th>'
        f"</tr>{rows}</table>"
        f'<p><a href="{esc(r.url)}" download="{esc(r.html_path.name)}" target="_blank"'
        f' rel="noopener">Download the report ({esc(r.html_path.name)})</a>'
        " · also saved in the data directory's reports folder</p>"
        f'<iframe class="rp-report-frame" title="diversity report of draft {v.draft_id}"'
        f' sandbox="" srcdoc="{esc(r.html)}"></iframe></div>'
    )


# -- wiring -----------------------------------------------------------------------------------
def add_pool_tab(services: Services) -> None:
    """The Pool tab's components and its one endpoint (`/pool`); call inside `gr.Tabs()`."""
    import gradio as gr  # the plain functions above work without it

    def build(
        target: float | None,
        love_fraction: float | None,
        max_per_photo: float | None,
        max_per_model: float | None,
    ) -> tuple[str, str]:
        """Build and save a draft pool (as `refpool pool build`); its counts and diversity report."""
        v = build_draft(services, target, love_fraction, max_per_photo, max_per_model)
        return pool_html(v), pool_report_html(v)

    with gr.Tab("Pool", id="pool"):
        with gr.Row():
            target = gr.Number(
                services.settings.target,
                label="Target size",
                precision=0,
                elem_id="rp-pool-target",
            )
            love = gr.Slider(
                0,
                1,
                value=DEFAULT_LOVE_FRACTION,
                step=0.05,
                label="Love fraction",
                elem_id="rp-pool-fraction",
            )
            per_photo = gr.Number(
                0, label="Max per photo (0: no cap)", precision=0, elem_id="rp-pool-per-photo"
            )
            per_model = gr.Number(
                0, label="Max per model (0: no cap)", precision=0, elem_id="rp-pool-per-model"
            )
        button = gr.Button(
            "Build draft",
            variant="primary",
            elem_id="rp-pool-btn",
            interactive=not services.settings.blind,
        )
        placeholder = (
            PoolView(BLIND_REFUSAL, "warn")
            if services.settings.blind
            else PoolView("Press Build draft to choose a pool from the rated candidates.")
        )
        view = gr.HTML(pool_html(placeholder), elem_id="rp-pool-wrap")
        gr.Markdown("#### Diversity report")
        report = gr.HTML(elem_id="rp-pool-report-wrap")
    button.click(
        build,
        [target, love, per_photo, per_model],
        [view, report],
        api_name="pool",
        show_progress="full",
    )
