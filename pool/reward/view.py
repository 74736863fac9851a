"""The pool as a reward signal, as figures a report, card or studio tab can show.

Read-only and model-free: everything here comes from what calibration, the agreement check
and `refpool score` stored. Nothing calls a judge or a scorer.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from pool.reward.judge import judge_label
from pool.reward.judge_agreement import JudgeAgreement, stored_judge_agreement
from pool.reward.ladder import LADDER_CLASSES, RUNG_HIGH, RUNG_LOW
from refpool.core.html import esc
from refpool.core.store import Store
from refpool.core.store.calibration import ladder, preferences


@dataclass(frozen=True)
class LadderFigures:
    candidates: int  # in the set asked about
    calibrated: int  # with a ladder entry
    counts: dict[str, int]  # ceiling / rung / free_win / unresolved, over the calibrated
    judges: list[str]  # labels of the judges behind the entries (the heuristic one says so)
    heuristic: bool  # any entry came from the heuristic judge
    per_candidate: dict[int, dict[str, Any]] = field(default_factory=dict)  # win_rate, ladder
    band: tuple[float, float] = (RUNG_LOW, RUNG_HIGH)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ladder_figures(store: Store, ids: list[int]) -> LadderFigures:
    """The ladder over a set of candidates (a draft, a version, the whole library)."""
    entries = ladder(store, ids)
    counts = Counter(e.ladder or "unresolved" for e in entries.values())
    labels = sorted({judge_label(e.judge, e.heuristic) for e in entries.values()})
    return LadderFigures(
        candidates=len(ids),
        calibrated=len(entries),
        counts={k: counts.get(k, 0) for k in (*LADDER_CLASSES, "unresolved")},
        judges=labels,
        heuristic=any(e.heuristic for e in entries.values()),
        per_candidate={
            cid: {
                "win_rate": e.win_rate,
                "ladder": e.ladder,
                "resolved": e.resolved,
                "position_bias": e.position_bias,
            }
            for cid, e in sorted(entries.items())
        },
    )


@dataclass(frozen=True)
class PreferenceFigures:
    candidates: int
    scored: int
    scorers: list[str]
    mu_median: float | None
    mu_min: float | None
    mu_max: float | None
    note: str  # what a card says about hpsv3_mu

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def preference_figures(store: Store, ids: list[int]) -> PreferenceFigures:
    """hpsv3_mu over a set of candidates, or a note saying it is null and why."""
    wanted = set(ids)
    rows = [r for cid, r in preferences(store).items() if cid in wanted]
    mus = [r.hpsv3_mu for r in rows]
    scorers = sorted({r.scorer for r in rows})
    if not rows:
        note = "hpsv3_mu is null: no preference scorer was run (`refpool score --scorer NAME`)"
    elif len(rows) < len(wanted):
        note = f"hpsv3_mu from {', '.join(scorers)} for {len(rows)} of {len(wanted)}; the rest null"
    else:
        note = f"hpsv3_mu and hpsv3_sigma from {', '.join(scorers)}"
    return PreferenceFigures(
        candidates=len(wanted),
        scored=len(rows),
        scorers=scorers,
        mu_median=round(statistics.median(mus), 4) if mus else None,
        mu_min=min(mus) if mus else None,
        mu_max=max(mus) if mus else None,
        note=note,
    )


def stored_agreement(store: Store) -> JudgeAgreement | None:
    """Agreement with the curators of the judge behind the latest calibration, from stored
    verdicts only (None before any calibration); synchronous, so a card or report written
    from inside an event loop needs no thread. Run `refpool pool judge-agreement` first to
    ask the judge about love/okay pairs."""
    entries = sorted(ladder(store).values(), key=lambda e: e.updated_at)
    if not entries or not entries[-1].judge_key:
        return None
    last = entries[-1]
    return stored_judge_agreement(store, last.judge, last.judge_key, last.heuristic)


def reward_card_lines(store: Store, ids: list[int]) -> list[str]:
    """The card's "As a reward signal" section: the ladder over the release and whether the
    judge behind it tells the curators' love from their okay (a warning when it can't)."""
    figures = ladder_figures(store, ids)
    lines = ["", "## As a reward signal", ""]
    if not figures.calibrated:
        lines.append(
            "Not calibrated: no judge has compared a policy's paintings with these references"
            " (`refpool pool calibrate`), so nobody knows whether the pool gives a gradient."
        )
        return lines
    c = figures.counts
    lines += [
        f"Judge: {', '.join(figures.judges)}. Policy win rate against each reference, both"
        f" orders, ties 0.5: below {figures.band[0]} a ceiling, {figures.band[0]}–"
        f"{figures.band[1]} a rung, above {figures.band[1]} a free win.",
        "",
        "| ceiling | rung | free win | unresolved | calibrated |",
        "|---|---|---|---|---|",
        f"| {c['ceiling']} | {c['rung']} | {c['free_win']} | {c['unresolved']}"
        f" | {figures.calibrated} of {figures.candidates} |",
    ]
    agreement = stored_agreement(store)
    if agreement is not None and agreement.warning:
        lines += ["", f"> **Warning:** {agreement.warning}."]
    elif agreement is not None and agreement.agreement is not None:
        lines += [
            "",
            f"The judge prefers a curator's love over their okay in {agreement.agreement:.0%}"
            f" of {agreement.resolved} pairs (ties count half).",
        ]
    return lines


def reward_section(store: Store, ids: list[int]) -> tuple[str, dict[str, Any]]:
    """The report's "As a reward signal" section (HTML) and its JSON: the ladder over `ids`,
    the judge's agreement with the curators, and the preference scores."""
    figures = ladder_figures(store, ids)
    agreement = stored_agreement(store) if figures.calibrated else None
    prefs = preference_figures(store, ids)
    payload = {
        "ladder": {k: v for k, v in figures.to_dict().items() if k != "per_candidate"},
        "agreement": agreement.to_dict() if agreement else None,
        "preference": prefs.to_dict(),
    }
    parts = [
        "<h2>As a reward signal</h2>",
        "<p>A pool gives an RL policy a gradient only if the policy wins some comparisons and"
        " loses others. Calibration runs the pairwise judge between a policy's paintings and"
        " each reference in both orders (a disagreement is a tie worth 0.5): below"
        f" {figures.band[0]} the reference is a <b>ceiling</b>, {figures.band[0]}–"
        f"{figures.band[1]} a <b>rung</b> worth sampling, above {figures.band[1]} a"
        " <b>free win</b>.</p>",
    ]
    if not figures.calibrated:
        parts.append("<p>Not calibrated yet: run <code>refpool pool calibrate</code>.</p>")
    else:
        c = figures.counts
        parts.append(
            f"<p>Judge: {esc(', '.join(figures.judges))}. {figures.calibrated} of"
            f" {figures.candidates} calibrated.</p><table><tr><th>ceiling</th><th>rung</th>"
            f"<th>free win</th><th>unresolved</th></tr><tr><td>{c['ceiling']}</td>"
            f"<td>{c['rung']}</td><td>{c['free_win']}</td><td>{c['unresolved']}</td></tr></table>"
        )
    if agreement is not None:
        warning = agreement.warning
        parts.append(
            f"<p class='warn'>Warning: {esc(warning)}.</p>"
            if warning
            else f"<p>Judge agreement with the curators: it prefers a curator's love over their"
            f" okay in {agreement.agreement:.0%} of {agreement.resolved} pairs (ties count half;"
            f" 50% is chance); both orders agree in {agreement.consistency:.0%}.</p>"
        )
    parts.append(f"<p>Preference scores: {esc(prefs.note)}.</p>")
    return "\n".join(parts), payload
