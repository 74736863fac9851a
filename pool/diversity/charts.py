"""Inline SVG charts and swatches for the diversity report (self-contained HTML, no scripts).

Every label is escaped: photo names and model ids come from users.
"""

from __future__ import annotations

import colorsys
import math

from refpool.core.html import esc


def bar_chart(title: str, counts: dict[str, int], width: int = 420, total: int = 0) -> str:
    """Horizontal bars, one per label; with `total`, each count also shows its share of it."""
    if not counts:
        return f"<figure><figcaption>{esc(title)}</figcaption><p>none</p></figure>"
    row, label_w = 18, 150
    top = max(counts.values())
    h = row * len(counts) + 6
    parts = [f'<svg width="{width}" height="{h}" role="img" aria-label="{esc(title)}">']
    for i, (label, n) in enumerate(counts.items()):
        y = i * row + 3
        w = (width - label_w - (80 if total else 40)) * n / top  # room for "n (share)"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end">{esc(str(label)[:22])}</text>'
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{row - 4}" fill="#6a8caf"/>'
            f'<text x="{label_w + w + 4:.1f}" y="{y + 12}">{n}{f" ({n / total:.0%})" if total else ""}</text>'
        )
    parts.append("</svg>")
    return f"<figure><figcaption>{esc(title)}</figcaption>{''.join(parts)}</figure>"


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
    parts = [f'<svg width="{width}" height="{height + 30}" role="img" aria-label="{esc(title)}">']
    if band:
        parts.append(
            f'<rect x="{30 + band[0] * bw:.1f}" y="0" width="{(band[1] - band[0]) * bw:.1f}"'
            f' height="{height}" fill="#f3e3b5"/>'
        )
    for i, c in enumerate(counts):
        h = height * c / top
        parts.append(
            f'<rect x="{30 + i * bw:.1f}" y="{height - h:.1f}" width="{max(bw - 1, 1):.1f}"'
            f' height="{h:.1f}" fill="#6a8caf"><title>{esc(x_labels[i])}: {c}</title></rect>'
        )
    for k, (pos, colour, label) in enumerate(marks):
        x = 30 + pos * bw
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{height}" stroke="{colour}"'
            f' stroke-width="2"/><text x="{x + 3:.1f}" y="{12 + 14 * k}"'
            f' fill="{colour}">{esc(label)}</text>'
        )
    step = max(1, n // 8)
    for i in range(0, n, step):
        parts.append(f'<text x="{30 + i * bw:.1f}" y="{height + 16}">{esc(x_labels[i])}</text>')
    parts.append(f'<text x="0" y="12">{top}</text></svg>')
    return f"<figure><figcaption>{esc(title)}</figcaption>{''.join(parts)}</figure>"


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


def swatches(palette: list[tuple[str, float]]) -> str:
    return "".join(
        f'<span class="sw" style="background:{esc(c)}" title="{esc(c)} {s:.1%}"></span>'
        for c, s in palette
    )


def tier_table(title: str, table: dict[str, dict[str, int]], limit: int = 40) -> str:
    """Rows (a photo, a model) by tier columns, with each row's total and share of all."""
    if not table:
        return f"<h3>{esc(title)}</h3><p>none</p>"
    tiers = list(next(iter(table.values())))
    total = sum(sum(row.values()) for row in table.values())
    head = "".join(f"<th>{esc(t)}</th>" for t in tiers)
    rows = []
    for label, row in list(table.items())[:limit]:
        n = sum(row.values())
        cells = "".join(f"<td>{row[t]}</td>" for t in tiers)
        rows.append(f"<tr><td>{esc(label)}</td>{cells}<td>{n}</td><td>{n / total:.0%}</td></tr>")
    more = f"<p>{len(table) - limit} more not shown.</p>" if len(table) > limit else ""
    return (
        f"<h3>{esc(title)}</h3><table><tr><th></th>{head}<th>total</th><th>share</th></tr>"
        + "".join(rows)
        + f"</table>{more}"
    )
