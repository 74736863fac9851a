"""The diversity report: one self-contained HTML file (inline SVG charts, base64 thumbnails).

`write_report(store, out, tiers, label, compare=...)` writes the HTML (and optionally the
same numbers as JSON). Everything user-supplied (photo names, model ids) is escaped.
"""

from __future__ import annotations

import base64
import colorsys
import html
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pool.analysis import PoolMetrics, analyse, headline
from pool.versions import VersionDiff, diff_tiers
from refpool.defaults import DUP_THRESHOLD
from refpool.store import Store

THUMBS_PER_TIER = 60
THUMBS_PER_DIFF = 30


@dataclass
class ReportResult:
    html_path: Path
    json_path: Path | None
    metrics: dict[str, Any]


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def bar_chart(title: str, counts: dict[str, int], width: int = 420) -> str:
    """Horizontal bars, one per label."""
    if not counts:
        return f"<figure><figcaption>{_e(title)}</figcaption><p>none</p></figure>"
    row, label_w = 18, 150
    top = max(counts.values())
    h = row * len(counts) + 6
    parts = [f'<svg width="{width}" height="{h}" role="img" aria-label="{_e(title)}">']
    for i, (label, n) in enumerate(counts.items()):
        y = i * row + 3
        w = (width - label_w - 40) * n / top
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end">{_e(str(label)[:22])}</text>'
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{row - 4}" fill="#6a8caf"/>'
            f'<text x="{label_w + w + 4:.1f}" y="{y + 12}">{n}</text>'
        )
    parts.append("</svg>")
    return f"<figure><figcaption>{_e(title)}</figcaption>{''.join(parts)}</figure>"


def histogram(
    title: str,
    counts: list[int],
    x_labels: list[str],
    marks: list[tuple[float, str, str]],
    band: tuple[float, float] | None = None,
    width: int = 640,
    height: int = 160,
) -> str:
    """Vertical bars; `marks` are (bin position, colour, label) lines; `band` shades a bin range."""
    n = len(counts)
    top = max(counts) if counts and max(counts) > 0 else 1
    bw = (width - 40) / max(n, 1)
    parts = [f'<svg width="{width}" height="{height + 30}" role="img" aria-label="{_e(title)}">']
    if band:
        parts.append(
            f'<rect x="{30 + band[0] * bw:.1f}" y="0" width="{(band[1] - band[0]) * bw:.1f}"'
            f' height="{height}" fill="#f3e3b5"/>'
        )
    for i, c in enumerate(counts):
        h = height * c / top
        parts.append(
            f'<rect x="{30 + i * bw:.1f}" y="{height - h:.1f}" width="{max(bw - 1, 1):.1f}"'
            f' height="{h:.1f}" fill="#6a8caf"><title>{_e(x_labels[i])}: {c}</title></rect>'
        )
    for k, (pos, colour, label) in enumerate(marks):
        x = 30 + pos * bw
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{height}" stroke="{colour}"'
            f' stroke-width="2"/><text x="{x + 3:.1f}" y="{12 + 14 * k}"'
            f' fill="{colour}">{_e(label)}</text>'
        )
    step = max(1, n // 8)
    for i in range(0, n, step):
        parts.append(f'<text x="{30 + i * bw:.1f}" y="{height + 16}">{_e(x_labels[i])}</text>')
    parts.append(f'<text x="0" y="12">{top}</text></svg>')
    return f"<figure><figcaption>{_e(title)}</figcaption>{''.join(parts)}</figure>"


def hue_wheel(shares: list[float], size: int = 220) -> str:
    """36 wedges coloured by hue; a wedge's radius grows with the share of saturated pixels."""
    c, r_max = size / 2, size / 2 - 4
    top = max(shares) if shares and max(shares) > 0 else 1
    parts = [
        f'<svg width="{size}" height="{size}" role="img" aria-label="hue wheel">',
        f'<circle cx="{c}" cy="{c}" r="{r_max}" fill="none" stroke="#ccc"/>',
    ]
    n = len(shares)
    for i, s in enumerate(shares):
        if s <= 0:
            continue
        r = r_max * math.sqrt(s / top)
        a0, a1 = 2 * math.pi * i / n, 2 * math.pi * (i + 1) / n
        x0, y0 = c + r * math.cos(a0), c - r * math.sin(a0)
        x1, y1 = c + r * math.cos(a1), c - r * math.sin(a1)
        rgb = colorsys.hsv_to_rgb((i + 0.5) / n, 0.85, 0.9)
        fill = "#{:02x}{:02x}{:02x}".format(*(int(v * 255) for v in rgb))
        parts.append(
            f'<path d="M{c},{c} L{x0:.1f},{y0:.1f} A{r:.1f},{r:.1f} 0 0,0 {x1:.1f},{y1:.1f} Z"'
            f' fill="{fill}"><title>{i * 10}-{i * 10 + 10} deg: {s:.1%}</title></path>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _share(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def swatches(palette: list[tuple[str, float]]) -> str:
    return "".join(
        f'<span class="sw" style="background:{_e(c)}" title="{_e(c)} {s:.1%}"></span>'
        for c, s in palette
    )


def _thumb(a: PoolMetrics, cid: int, note: str = "") -> str:
    data = base64.b64encode(a.features[cid].thumb).decode()
    c = a.entries[cid].candidate
    cap = f"#{cid} {a.tiers[cid]} · {c.generator} r{c.round}" + (f" · {note}" if note else "")
    return (
        f'<figure class="th"><img src="data:image/jpeg;base64,{data}" alt="candidate {cid}">'
        f"<figcaption>{_e(cap)}</figcaption></figure>"
    )


def _headline_table(
    metrics: dict[str, Any], other: dict[str, Any] | None = None, other_label: str = ""
) -> str:
    rows = []
    theirs = dict(headline(other)) if other else {}
    for name, value in headline(metrics):
        cells = f"<td>{_e(name)}</td><td>{_e(value)}</td>"
        if other:
            o = theirs.get(name)
            delta = (
                round(value - o, 3)
                if isinstance(value, (int, float)) and isinstance(o, (int, float))
                else ""
            )
            cells += f"<td>{_e(o)}</td><td>{_e(delta)}</td>"
        rows.append(f"<tr>{cells}</tr>")
    head = (
        "<tr><th>metric</th><th>this</th>"
        + (f"<th>{_e(other_label)}</th><th>change</th>" if other else "")
        + "</tr>"
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
.th figcaption{font-weight:400;font-size:10px}.cluster{margin:6px 0;padding:4px;background:#f6f6f6}
"""


def render_html(
    a: PoolMetrics, compare: PoolMetrics | None = None, diff: VersionDiff | None = None
) -> str:
    mt = a.metrics
    ph = mt["phash"]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>refpool report: {_e(a.label)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>Diversity report: {_e(a.label)}</h1>",
        f"<p>{mt['n']} images · generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC ·"
        f" near-duplicate threshold: dHash distance ≤ {ph['threshold']}</p>",
        "<h2>Summary</h2>",
        _headline_table(mt, compare.metrics if compare else None, compare.label if compare else ""),
    ]
    parts.append("<h2>Counts</h2>")
    for key, title in (
        ("tier", "by tier"),
        ("model", "by model"),
        ("round", "by round"),
        ("photo", "by photo"),
    ):
        parts.append(bar_chart(title, mt["counts"][key]))

    parts.append("<h2>Perceptual-hash distances</h2>")
    parts.append(
        histogram(
            f"pairwise perceptual-hash (dHash) distances (median {ph['median']}, min {ph['min']})",
            ph["histogram"],
            [str(i) for i in range(65)],
            [(ph["threshold"] + 1, "#c0392b", f"threshold {ph['threshold']}")],
        )
    )
    clusters = mt["near_duplicates"]["clusters"]
    parts.append(f"<h2>Near-duplicate clusters ({len(clusters)})</h2>")
    if not clusters:
        parts.append("<p>None: no two images are within the threshold.</p>")
    index = {c: i for i, c in enumerate(a.ids)}
    for group in clusters[:40]:
        rows = [index[c] for c in group]

        def nearest(c: int, rows: list[int] = rows) -> int:  # distance to its closest cluster mate
            return min(int(a.distances[index[c], j]) for j in rows if j != index[c])

        thumbs = "".join(_thumb(a, c, f"nearest d={nearest(c)}") for c in group[:12])
        parts.append(f'<div class="cluster">{thumbs}</div>')

    hue = mt["hue"]
    parts.append("<h2>Colour</h2>")
    parts.append(
        f"<figure><figcaption>hue wheel (saturated pixels): entropy {hue['entropy_bits']} of"
        f" {hue['max_entropy_bits']} bits, coverage {hue['coverage']:.0%}</figcaption>"
        f"{hue_wheel(hue['histogram'])}</figure>"
    )
    parts.append(
        f"<figure><figcaption>pool palette</figcaption><div>{swatches(mt['palette'])}</div></figure>"
    )
    v = mt["vendi"]
    parts.append(
        f"<p>Vendi score (effective number of distinct images): <b>{v['hash']}</b> over"
        f" dHash similarity, <b>{v['colour']}</b> over paint-colour histograms,"
        f" out of {mt['n']}.</p>"
    )

    cov = mt["coverage"]
    pub = cov["published_love"]
    bins = len(cov["histogram"])
    parts.append("<h2>Paint coverage</h2>")
    parts.append(
        histogram(
            f"paint coverage (median {cov['median']}; {_share(cov['in_published_range'])}"
            f" inside the published love range {pub['min']}-{pub['max']}, shaded)",
            cov["histogram"],
            [f"{i / bins:.2f}" for i in range(bins)],
            [(pub["median"] * bins, "#c0392b", f"published love median {pub['median']}")]
            + (
                [(cov["median"] * bins, "#2c3e50", f"ours {cov['median']}")]
                if cov["median"] is not None
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
    for tier, t in mt["per_tier"].items():
        parts.append(
            f"<tr><td>{_e(tier)}</td><td>{t['n']}</td><td>{t['vendi']['hash']}</td>"
            f"<td>{t['vendi']['colour']}</td><td>{t['hue']['entropy_bits']}</td>"
            f"<td>{t['hue']['coverage']:.0%}</td><td>{t['coverage']['median']}</td>"
            f"<td>{swatches(t['palette'])}</td></tr>"
        )
    parts.append("</table>")
    for tier in mt["per_tier"]:
        members = [c for c in a.ids if a.tiers[c] == tier]
        shown = members[:: max(1, math.ceil(len(members) / THUMBS_PER_TIER))]
        parts.append(f"<h3>{_e(tier)} ({len(members)}; {len(shown)} shown)</h3>")
        parts.append("".join(_thumb(a, c) for c in shown))

    if compare and diff:
        parts.append(f"<h2>Changes against {_e(compare.label)}</h2>")
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
    threshold: int = DUP_THRESHOLD,
    progress: bool = True,
) -> ReportResult:
    """Analyse `tiers` (and `compare`, a (label, tiers) pair) and write HTML (+ JSON)."""
    if not tiers:
        raise ValueError(f"{label} is empty: nothing to report on")
    a = analyse(store, tiers, label=label, threshold=threshold, progress=progress)
    other = diff = None
    if compare:
        other = analyse(store, compare[1], label=compare[0], threshold=threshold, progress=progress)
        diff = diff_tiers(compare[1], tiers, compare[0], label)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(a, other, diff), "utf-8")
    payload = dict(a.metrics)
    if other and diff:
        payload["compare"] = {
            "label": other.label,
            "diff": diff.to_dict(),
            "metrics": other.metrics,
        }
    json_path = None
    if json_out:
        json_path = Path(json_out)
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(payload, indent=2), "utf-8")
    return ReportResult(out, json_path, payload)
