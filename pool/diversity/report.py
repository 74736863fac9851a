"""The diversity report: one self-contained HTML file (inline SVG charts, base64 thumbnails).

`write_report(store, out, tiers, label, compare=...)` writes the HTML (and optionally the
same numbers as JSON). Everything user-supplied (photo names, model ids) is escaped.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pool.diversity.analysis import HEADLINE_NOTES, PoolMetrics, analyse, headline
from pool.diversity.charts import bar_chart, histogram, hue_wheel, swatches, tier_table
from pool.diversity.dupes import CandidateClusters, candidate_clusters
from pool.diversity.records import Metrics
from pool.reward.view import reward_section
from pool.selection.versions import VersionDiff, diff_tiers
from refpool.core.contracts import Candidate
from refpool.core.defaults import DUP_THRESHOLD
from refpool.core.errors import InputError
from refpool.core.html import esc
from refpool.core.store import Store

THUMBS_PER_TIER = 60
THUMBS_PER_DIFF = 30
MAX_CANDIDATE_CLUSTERS = 40


@dataclass
class ReportResult:
    html_path: Path
    json_path: Path | None
    metrics: Metrics  # the selection's numbers
    payload: dict[str, Any]  # the JSON written: metrics.to_dict() plus reward, all_candidates...


def _share(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def _figure(thumb: bytes, cid: int, c: Candidate, note: str) -> str:
    data = base64.b64encode(thumb).decode()
    cap = f"#{cid} {c.generator} r{c.round}" + (f" · {note}" if note else "")
    return (
        f'<figure class="th"><img src="data:image/jpeg;base64,{data}" alt="candidate {cid}">'
        f"<figcaption>{esc(cap)}</figcaption></figure>"
    )


def _thumb(a: PoolMetrics, cid: int, note: str = "") -> str:
    tier = a.tiers[cid] + (f" · {note}" if note else "")
    return _figure(a.features[cid].thumb, cid, a.entries[cid].candidate, tier)


def _headline_table(metrics: Metrics, other: Metrics | None = None, other_label: str = "") -> str:
    rows = []
    theirs = dict(headline(other)) if other else {}
    for name, value in headline(metrics):
        cells = f"<td>{esc(name)}</td><td>{esc(value)}</td>"
        if other:
            o = theirs.get(name)
            delta = (
                round(value - o, 3)
                if isinstance(value, (int, float)) and isinstance(o, (int, float))
                else ""
            )
            cells += f"<td>{esc(o)}</td><td>{esc(delta)}</td>"
        cells += f"<td class='note'>{esc(HEADLINE_NOTES.get(name, ''))}</td>"
        rows.append(f"<tr>{cells}</tr>")
    head = (
        "<tr><th>metric</th><th>this</th>"
        + (f"<th>{esc(other_label)}</th><th>change</th>" if other else "")
        + "<th>what it means</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


CSS = """
body{font:14px system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;margin-top:2em}
figure{display:inline-block;margin:0 1.5em 1em 0;vertical-align:top}
figcaption{font-weight:600;margin-bottom:4px}svg text{font-size:11px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
.sw{display:inline-block;width:28px;height:28px;margin:1px;border:1px solid #0002}
.th{width:104px;margin:2px}.th img{width:96px;height:96px;object-fit:cover}
.th figcaption{font-weight:400;font-size:10px}.note{color:#555;font-size:12px}.cluster{margin:6px 0;padding:4px;background:#f6f6f6}
"""


def _all_candidates(everyone: CandidateClusters, in_pool: set[int]) -> str:
    """Clusters over every candidate, each member marked in or out of this selection."""
    n, clustered = len(everyone.ids), sum(len(g) for g in everyone.clusters)
    parts = [
        f"<h2>Near-duplicate clusters among all candidates ({len(everyone.clusters)})</h2>",
        f"<p>Over all {n} candidates with an image, not only this selection"
        f" (where <code>pool build</code> has already left near-duplicates out):"
        f" {clustered} candidates ({_share(clustered / n if n else None)}) sit in"
        f" {len(everyone.clusters)} clusters whose members are all within {everyone.threshold} of each"
        " other. A cluster is one picture painted several times (other seeds, revisions);"
        " <b>in pool</b> marks the member this selection kept.</p>",
    ]
    for group in everyone.clusters[:MAX_CANDIDATE_CLUSTERS]:
        thumbs = []
        for c in group[:12]:
            e = everyone.entries[c]
            note = f"{e.tier or 'unrated'} · nearest d={everyone.nearest[c]}"
            note += " · in pool" if c in in_pool else ""
            thumbs.append(_figure(everyone.features[c].thumb, c, e.candidate, note))
        parts.append(f'<div class="cluster">{"".join(thumbs)}</div>')
    if len(everyone.clusters) > MAX_CANDIDATE_CLUSTERS:
        parts.append(f"<p>{len(everyone.clusters) - MAX_CANDIDATE_CLUSTERS} more not shown.</p>")
    return "".join(parts)


def render_html(
    a: PoolMetrics,
    compare: PoolMetrics | None = None,
    diff: VersionDiff | None = None,
    everyone: CandidateClusters | None = None,
    reward: str = "",
) -> str:
    mt = a.metrics
    dist = mt.distance
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>refpool report: {esc(a.label)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>Diversity report: {esc(a.label)}</h1>",
        f"<p>{mt.n} images · generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC ·"
        f" near-duplicate threshold: distance ≤ {dist.threshold} of 100 (colour, layout,"
        " texture)</p>",
        "<h2>Summary</h2>",
        _headline_table(mt, compare.metrics if compare else None, compare.label if compare else ""),
    ]
    n = mt.n
    parts.append("<h2>Counts</h2>")
    parts.append(
        "<p>How many images come from each tier, model, round and photo, and what share of the"
        " selection each is: a pool leaning on one photo or one model teaches its quirks.</p>"
    )
    for key, title in (
        ("tier", "by tier"),
        ("model", "by model"),
        ("round", "by round"),
        ("photo", "by photo"),
    ):
        parts.append(bar_chart(title, getattr(mt.counts, key), total=n))
    parts.append(
        "<p>Tier by photo and tier by model: whether love and okay come from the same photos"
        " and models, or one tier is one model's work.</p>"
    )
    parts.append(tier_table("tier × photo", mt.tier_by.photo))
    parts.append(tier_table("tier × model", mt.tier_by.model))

    parts.append("<h2>Near-duplicate distances</h2>")
    parts.append(
        f"<p>{esc(HEADLINE_NOTES['median distance'])}. Two images at or below the threshold"
        f" ({dist.threshold}, calibrated with <code>python -m pool.similarity.threshold</code>) are"
        " near-duplicates.</p>"
    )
    width = 100 / len(dist.histogram)
    parts.append(
        histogram(
            f"pairwise distances (median {dist.median}, min {dist.min};"
            f" {dist.pairs_within_threshold} pairs within the threshold)",
            dist.histogram,
            [f"{i * width:g}" for i in range(len(dist.histogram))],
            [(dist.threshold / width, "#c0392b", f"threshold {dist.threshold}")],
        )
    )
    clusters = mt.near_duplicates.clusters
    parts.append(f"<h2>Near-duplicate clusters in this selection ({len(clusters)})</h2>")
    parts.append(f"<p>{esc(HEADLINE_NOTES['near-duplicate clusters'])}.</p>")
    if not clusters:
        parts.append("<p>None: no two images are within the threshold.</p>")
    index = {c: i for i, c in enumerate(a.ids)}
    for group in clusters[:40]:
        nearest = a.near.nearest_within([index[c] for c in group])  # to its closest mate
        thumbs = "".join(_thumb(a, c, f"nearest d={nearest[index[c]]:.1f}") for c in group[:12])
        parts.append(f'<div class="cluster">{thumbs}</div>')
    if everyone is not None:
        parts.append(_all_candidates(everyone, set(a.ids)))

    hue = mt.hue
    parts.append("<h2>Colour</h2>")
    parts.append(
        f"<p>Hue entropy: {esc(HEADLINE_NOTES['hue entropy (bits)'])}. Hue coverage:"
        f" {esc(HEADLINE_NOTES['hue coverage'])}. A wedge's radius grows with its share.</p>"
    )
    parts.append(
        f"<figure><figcaption>hue wheel (saturated pixels): entropy {hue.entropy_bits} of"
        f" {hue.max_entropy_bits} bits, coverage {hue.coverage:.0%}</figcaption>"
        f"{hue_wheel(hue.histogram)}</figure>"
    )
    parts.append(
        f"<figure><figcaption>pool palette</figcaption><div>{swatches(mt.palette)}</div></figure>"
    )
    v = mt.vendi
    parts.append(
        f"<p>Vendi score (effective number of distinct images): <b>{v.hash}</b> over"
        f" dHash similarity, <b>{v.colour}</b> over paint-colour histograms,"
        f" out of {mt.n}. {esc(HEADLINE_NOTES['Vendi (hash)'])};"
        f" {esc(HEADLINE_NOTES['Vendi (colour)'])}.</p>"
    )

    cov, stats = mt.coverage, mt.coverage.stats
    pub = cov.published_love
    bins = len(cov.histogram)
    parts.append("<h2>Paint coverage</h2>")
    parts.append(f"<p>{esc(HEADLINE_NOTES['median paint coverage'])}.</p>")
    parts.append(
        histogram(
            f"paint coverage (median {stats.median}; {_share(stats.in_published_range)}"
            f" inside the published love range {pub['min']}-{pub['max']}, shaded)",
            cov.histogram,
            [f"{i / bins:.2f}" for i in range(bins)],
            [(pub["median"] * bins, "#c0392b", f"published love median {pub['median']}")]
            + (
                [(stats.median * bins, "#2c3e50", f"ours {stats.median}")]
                if stats.median is not None
                else []
            ),
            band=(pub["min"] * bins, pub["max"] * bins),
        )
    )

    parts.append(
        "<h2>Per tier</h2><table><tr><th>tier</th><th>n</th><th>Vendi hash</th>"
        "<th>Vendi colour</th><th>hue entropy</th><th>hue coverage</th>"
        "<th>median coverage</th><th>palette</th></tr>"
    )
    for tier, t in mt.per_tier.items():
        parts.append(
            f"<tr><td>{esc(tier)}</td><td>{t.n}</td><td>{t.vendi.hash}</td>"
            f"<td>{t.vendi.colour}</td><td>{t.hue.entropy_bits}</td>"
            f"<td>{t.hue.coverage:.0%}</td><td>{t.coverage.median}</td>"
            f"<td>{swatches(t.palette)}</td></tr>"
        )
    parts.append("</table>")
    for tier in mt.per_tier:
        members = [c for c in a.ids if a.tiers[c] == tier]
        shown = members[:: max(1, math.ceil(len(members) / THUMBS_PER_TIER))]
        parts.append(f"<h3>{esc(tier)} ({len(members)}; {len(shown)} shown)</h3>")
        parts.append("".join(_thumb(a, c) for c in shown))

    parts.append(reward)
    if compare and diff:
        parts.append(f"<h2>Changes against {esc(compare.label)}</h2>")
        parts.append(
            f"<p>{len(diff.added)} added, {len(diff.removed)} removed, "
            f"{len(diff.retiered)} re-tiered.</p>"
        )
        if diff.added:
            parts.append(
                "<h3>added</h3>" + "".join(_thumb(a, c) for c in diff.added[:THUMBS_PER_DIFF])
            )
        if diff.removed:
            parts.append(
                "<h3>removed</h3>"
                + "".join(_thumb(compare, c) for c in diff.removed[:THUMBS_PER_DIFF])
            )
        if diff.retiered:
            parts.append(
                "<h3>re-tiered</h3>"
                + "".join(
                    _thumb(a, c, f"was {old}") for c, old, _ in diff.retiered[:THUMBS_PER_DIFF]
                )
            )
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    store: Store,
    out: Path | str,
    tiers: dict[int, str],
    label: str,
    json_out: Path | str | None = None,
    compare: tuple[str, dict[int, str]] | None = None,
    threshold: float = DUP_THRESHOLD,
    progress: bool = True,
    all_candidates: bool = True,
) -> ReportResult:
    """Analyse `tiers` (and `compare`, a (label, tiers) pair) and write HTML (+ JSON).

    With `all_candidates`, near-duplicate clusters are also found over every candidate with
    an image (JSON key "all_candidates"), each member marked in or out of `tiers`.
    """
    if not tiers:
        raise InputError(f"{label} is empty: nothing to report on")
    # One scan of every candidate pair serves both the all-candidates clusters and the
    # selection's own numbers (its statistics are over the selection's pairs).
    everyone = (
        candidate_clusters(store, threshold, progress, selection=tiers) if all_candidates else None
    )
    pairs = everyone.pairs_of(tiers) if everyone is not None else None
    a = analyse(store, tiers, label=label, threshold=threshold, progress=progress, pairs=pairs)
    other = diff = None
    if compare:
        other = analyse(store, compare[1], label=compare[0], threshold=threshold, progress=progress)
        diff = diff_tiers(compare[1], tiers, compare[0], label)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    reward_html, reward = reward_section(store, a.ids)
    out.write_text(render_html(a, other, diff, everyone, reward_html), "utf-8")
    payload = a.metrics.to_dict() | {"reward": reward}
    if everyone is not None:
        payload["all_candidates"] = everyone.to_dict(set(a.ids))
    if other and diff:
        payload["compare"] = {
            "label": other.label,
            "diff": diff.to_dict(),
            "metrics": other.metrics.to_dict(),
        }
    json_path = None
    if json_out:
        json_path = Path(json_out)
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(payload, indent=2), "utf-8")
    return ReportResult(out, json_path, a.metrics, payload)
