"""The studio's Pool tab as plain functions: build a draft the way `refpool pool build` does,
save it, and write its diversity report under $REFPOOL_HOME/reports/.

The UI (curation/ui.py) only wires `build_draft` to components and formats the result with
curation/views.py. Selection and metrics live in pool/: nothing here recomputes them. In
blind mode model names become "model A", "model B"... everywhere this tab shows them (the
counts, the left-out reasons and the report), and curators' names never appear.
"""

from __future__ import annotations

import math
import os
import string
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from curation.studio import Services, file_url
from pool.analysis import Analysis, analyse, headline
from pool.catalog import load_items
from pool.report import render_html
from pool.selection import (
    DEFAULT_DUP_THRESHOLD,
    DEFAULT_LOVE_FRACTION,
    REASONS,
    Draft,
    Exclusion,
    SelectionError,
    build_pool,
    save_draft,
)
from pool.store import Store

EXAMPLES_PER_REASON = 5


@dataclass
class LeftOut:
    """The candidates left out for one reason."""

    reason: str  # a key of pool.selection.REASONS
    label: str  # REASONS[reason]
    count: int
    examples: list[tuple[int, str]]  # (candidate id, reason text), the first few


@dataclass
class DraftReport:
    html_path: Path
    url: str  # a URL the studio serves (the file, for download)
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
    per_model: dict[str, int] = field(default_factory=dict)  # anonymised in blind mode
    warnings: list[str] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    report: DraftReport | None = None
    report_problem: str = ""


def reports_dir(store: Store) -> Path:
    """Where the studio writes draft reports (served for download, like renders)."""
    out = store.home / "reports"
    out.mkdir(parents=True, exist_ok=True)
    return out


def model_aliases(store: Store) -> dict[str, str]:
    """generator -> "model A", "model B"... (stable for a store: sorted by name)."""
    names = [r["generator"] for r in store.query("SELECT DISTINCT generator FROM candidates")]
    letters = string.ascii_uppercase
    return {
        name: "model " + (letters[i] if i < 26 else f"{letters[i // 26 - 1]}{letters[i % 26]}")
        for i, name in enumerate(sorted(names))
    }


def check_inputs(
    target: object, love_fraction: object, max_per_photo: object, max_per_model: object
) -> tuple[int, float, int | None, int | None]:
    """Parse the tab's inputs; ValueError says which one is wrong and what is allowed.

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
            raise ValueError(f"{name} must be {allowed}, not {value!r}")
        return x

    def whole(value: object, name: str, optional: bool) -> int | None:
        allowed = "a whole number of at least " + ("0 (0: no cap)" if optional else "1")
        x = number(value, name, allowed)
        if x is None or (optional and x == 0):
            if optional:
                return None
            raise ValueError(f"{name} is empty: enter {allowed}")
        if x != int(x) or x < 1:
            raise ValueError(f"{name} must be {allowed}, not {value!r}")
        return int(x)

    tgt = whole(target, "Target size", optional=False)
    love = number(love_fraction, "Love fraction", "a number from 0 to 1")
    love = DEFAULT_LOVE_FRACTION if love is None else love
    if not 0.0 <= love <= 1.0:
        raise ValueError(f"Love fraction must be a number from 0 to 1, not {love_fraction!r}")
    return (
        int(tgt or 0),
        love,
        whole(max_per_photo, "Max per photo", optional=True),
        whole(max_per_model, "Max per model", optional=True),
    )


def _blind_text(e: Exclusion, aliases: dict[str, str]) -> str:
    if e.reason == "reject":
        return REASONS["reject"]  # the detail names the curators who rejected it
    if e.reason == "model_cap":
        for name, alias in aliases.items():
            if e.detail.startswith(f"model {name} already"):
                return alias + e.detail.removeprefix(f"model {name}")
        return REASONS["model_cap"]
    return e.detail


def group_left_out(
    draft: Draft, aliases: dict[str, str] | None = None, per_reason: int = EXAMPLES_PER_REASON
) -> list[LeftOut]:
    """Left-out candidates by reason, most common first; blinded when `aliases` is given."""
    groups = []
    for reason, items in sorted(draft.reasons().items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = items[:per_reason]
        examples = [
            (e.candidate_id, e.detail if aliases is None else _blind_text(e, aliases))
            for e in shown
        ]
        groups.append(LeftOut(reason, REASONS.get(reason, reason), len(items), examples))
    return groups


def _blind_analysis(a: Analysis, aliases: dict[str, str]) -> Analysis:
    """The same analysis with model names replaced, so the rendered report cannot show them."""
    items = {
        cid: replace(it, generator=aliases.get(it.generator, "model ?"))
        for cid, it in a.items.items()
    }
    metrics = dict(a.metrics)
    counts = dict(metrics["counts"])
    counts["model"] = {aliases.get(k, "model ?"): v for k, v in counts["model"].items()}
    metrics["counts"] = counts
    return replace(a, items=items, metrics=metrics)


def write_draft_report(
    services: Services, draft: Draft, draft_id: int, threshold: int = DEFAULT_DUP_THRESHOLD
) -> DraftReport:
    """Analyse the draft with pool.analysis and write pool.report's HTML to reports/draft-<id>.html."""
    store = services.store
    label = f"draft {draft_id}"
    a = analyse(store, draft.tiers, label=label, threshold=threshold)
    if services.settings.blind:
        a = _blind_analysis(a, model_aliases(store))
    html = render_html(a)
    out = reports_dir(store) / f"draft-{draft_id}.html"
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(html, "utf-8")
    os.replace(tmp, out)  # a reader never sees half a report
    return DraftReport(out, file_url(out), html, headline(a.metrics))


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
    """
    store, blind = services.store, services.settings.blind
    try:
        tgt, love, per_photo_cap, per_model_cap = check_inputs(
            target, love_fraction, max_per_photo, max_per_model
        )
    except ValueError as exc:
        return PoolView(str(exc), "error")
    try:
        draft = build_pool(
            store, target=tgt, max_per_photo=per_photo_cap, max_per_model=per_model_cap,
            love_fraction=love, dup_threshold=dup_threshold,
        )  # fmt: skip
    except SelectionError as exc:
        if not store.query("SELECT 1 FROM candidates LIMIT 1"):
            text = (
                "The store has no candidates yet. Generate some first (for example"
                " `refpool demo`), rate them, then build the draft."
            )
        else:
            text = f"No draft: {exc}"
        return PoolView(text, "warn", target=tgt)
    draft_id = save_draft(store, draft)
    aliases = model_aliases(store) if blind else None
    items = load_items(store, draft.candidate_ids)
    per_photo: dict[str, int] = {}
    per_model: dict[str, int] = {}
    for cid in draft.candidate_ids:
        it = items[cid]
        per_photo[it.photo_file_name] = per_photo.get(it.photo_file_name, 0) + 1
        model = aliases.get(it.generator, "model ?") if aliases else it.generator
        per_model[model] = per_model.get(model, 0) + 1
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
        left_out=group_left_out(draft, aliases),
    )
    if not draft.candidate_ids:
        view.report_problem = "The draft is empty, so there is nothing to report on."
        return view
    try:
        view.report = write_draft_report(services, draft, draft_id, dup_threshold)
    except (ValueError, LookupError, OSError) as exc:
        # The draft is saved either way; say why the report is missing and how to get it.
        view.report_problem = (
            f"The diversity report could not be written: {exc}. The draft is saved;"
            " `refpool report --draft --out report.html` retries it."
        )
    return view
