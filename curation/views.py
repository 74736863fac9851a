"""HTML for the studio, built from service results. Every user-supplied string is escaped
here (notes, program source, critique text, photo credits, curator names), and nothing
else in the UI writes HTML. Captions go through curation.captions.caption (bidi controls
dropped). A blind curator's page is built by curation/blind_view.py instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from curation.agreement import AgreementReport
from curation.blind_view import blind_grid_html, blind_screen_html, grid_frame, tile_html
from curation.captions import caption, message_html, photo_figure
from curation.commands import command_attrs
from curation.grid import Grid
from curation.service import Screen
from refpool.core.contracts import RATING_TIERS
from refpool.core.errors import RefpoolError
from refpool.core.html import esc

KEYS_HELP = (
    "<b>1</b> love · <b>2</b> okay · <b>3</b> reject · <b>4</b>/<b>space</b> skip · "
    "<b>z</b> undo · <b>n</b> note · <b>←/→</b> or <b>k/j</b> previous/next · <b>?</b> all keys"
)


def refusal_text(exc: RefpoolError) -> str:
    """What the studio says for a RefpoolError: its message, which names actions, not flags.
    Every studio handler that catches one shows it through here."""
    return exc.message


def refusal_html(exc: RefpoolError) -> str:
    """A RefpoolError in the studio's message box."""
    return message_html(refusal_text(exc), "error")


def error_view(message: str) -> str:
    """A view that only says what went wrong (no candidate); a fresh nonce so the browser
    knows the reply arrived."""
    return (
        f'<div id="rp-view" data-cid="" data-seen="0" data-nonce="{time.monotonic_ns()}"'
        f' data-error="1">{message_html(message, "error")}</div>'
    )


def screen_html(s: Screen) -> str:
    """The big view. Data attributes carry what the key handler sends back to the server."""
    if s.blind is not None:
        return blind_screen_html(s, s.blind)
    d = s.detail
    prefetch = " ".join(esc(u) for u in s.prefetch)
    head = (
        f'<div id="rp-view" data-cid="{d.id if d else ""}" data-seen="{d.seen if d else 0}"'
        f' data-nonce="{s.nonce}" data-prefetch="{prefetch}" data-curator="{esc(s.curator)}"'
        f' data-url="{esc(d.png_url or "") if d else ""}"'
        f' data-next-cid="{s.next_id or ""}" data-next-url="{esc(s.next_url or "")}"'
        f' data-chain="{esc(" ".join(f"{cid}|{url}" for cid, url in s.chain))}"'
        f' data-level="{esc(s.level)}"'
        + command_attrs(s.tokens, s.command, s.outcome)
        + "".join(
            f' data-{name}-cid="{cid}" data-{name}-url="{esc(url)}"'
            for name, (cid, url) in (
                ("fwd", s.neighbours.get("1", (None, None))),
                ("back", s.neighbours.get("-1", (None, None))),
            )
            if cid
        )
        + ">"
    )
    top = message_html(s.message, s.level)
    if s.progress:
        p = s.progress
        pct = round(100 * p.fraction())
        top += (
            f'<div class="rp-progress"><span>{esc(p.text())}</span>'
            f'<span class="rp-bar"><span style="width:{pct}%"></span></span></div>'
        )
    top = f'<div class="rp-status">{top}</div>'  # one line: the painting starts high
    chips = s.filters.chips()
    if chips:  # the active filters, without opening the accordion
        top += (
            '<div class="rp-chips" title="change them under Queue filters">Filtered: '
            + "".join(f'<span class="rp-chip">{esc(c)}</span>' for c in chips)
            + "</div>"
        )
    if d is None:
        return head + top + "</div>"
    render = (
        f'<img id="rp-img" src="{esc(d.png_url)}" data-cid="{d.id}" alt="render of candidate {d.id}">'
        if d.png_url
        else f'<div id="rp-img" class="rp-missing" data-cid="{d.id}">{esc(d.png_problem)}</div>'
    )
    mine = (
        f'<span class="rp-tier rp-{esc(d.my_tier)}">{esc(d.my_tier)}</span>'
        if d.my_tier
        else '<span class="rp-tier">unrated</span>'
    )
    others = "".join(
        f'<span class="rp-other">{esc(name)}: <span class="rp-tier rp-{esc(r["tier"])}">{esc(r["tier"])}</span>'
        + (f" “{caption(r['note'])}”" if r.get("note") else "")
        + "</span>"
        for name, r in sorted(d.others.items())
    )
    gate = "passed" if d.accepted else "failed"
    if d.violations:
        gate += ": " + "; ".join(esc(v.code) for v in d.violations)
    meta = [
        f"<b>#{d.id}</b> ({s.position}/{s.queue_len})",
        f"gate {gate}",
        f"coverage {d.coverage:.3f}" if d.coverage is not None else "coverage n/a",
        f"model {esc(d.generator)}" if d.generator is not None else "model hidden (blind)",
        f"round {d.round}",
        f"seed {d.seed}",
        *(
            [
                f"ladder {esc(d.ladder or 'unresolved')} (policy wins {d.win_rate:.0%}, {esc(d.ladder_judge)})"
            ]
            if d.win_rate is not None
            else []
        ),
        f"you: {mine}",
    ]
    note = f'<div class="rp-note">your note: {caption(d.my_note)}</div>' if d.my_note else ""
    history = "".join(
        f'<figure class="rp-stage{" rp-current" if st.id == d.id else ""}" data-rp-goto="{st.id}">'
        + (
            f'<img src="{esc(st.thumb_url)}" alt="round {st.round}">'
            if st.thumb_url
            else '<div class="rp-missing">no render</div>'
        )
        + f"<figcaption><b>round {st.round}</b> #{st.id}{'' if st.accepted else ' (failed gate)'}"
        + f"<br>{caption(st.critique) or '<i>no critique</i>'}</figcaption></figure>"
        for st in d.history
    )
    label = "Program" + (f" ({esc(d.program_note)})" if d.program_note else "")
    program = (
        f"<details class='rp-program'><summary>{label}</summary><pre><code>{esc(d.program)}</code></pre></details>"
        if d.program is not None
        else f"<div class='rp-program'>Program {esc(d.program_note or 'not available')}</div>"
    )
    return (
        head
        + top
        + f'<div class="rp-meta">{" · ".join(meta)}</div>'  # above: its id is never below the fold
        + '<div class="rp-main">'
        + f'<figure class="rp-render">{render}</figure>'
        + photo_figure(d.photo, d.photo_url, d.photo_problem)
        + "</div>"
        + (f'<div class="rp-others">{others}</div>' if others else "")
        + note
        + f'<div class="rp-keys">{KEYS_HELP}</div>'
        + f'<div class="rp-history">{history}</div>'
        + program
        + "</div>"
    )


def grid_html(g: Grid) -> str:
    if g.blind is not None:
        return blind_grid_html(g, g.blind)
    tiles = "".join(
        tile_html(
            t.id,
            f"#{t.id} r{t.round}" + (f" {caption(t.generator)}" if t.generator else ""),
            t.my_tier,
            t.thumb_url,
            f"candidate {t.id}",
        )
        for t in g.tiles
    )
    return grid_frame(g, tiles)


def _k(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def agreement_html(
    r: AgreementReport, blind: bool = False, link: Callable[[int], int] | None = None
) -> str:
    """The Agreement tab; `link` turns an id into what the page's goto sends (a lead's
    token in a blind studio)."""
    if blind:
        return message_html(
            "Agreement is hidden in blind mode (it reveals other curators' ratings).", "warn"
        )
    if len(r.curators) < 2:
        return message_html(
            "Agreement needs at least two curators with ratings. Ask a second curator to rate"
            " some of the same candidates.",
            "info",
        )
    rows = "".join(
        f"<tr><td>{esc(p.a)}</td><td>{esc(p.b)}</td><td>{p.shared}</td>"
        f'<td class="rp-kappa" data-a="{esc(p.a)}" data-b="{esc(p.b)}">{_k(p.kappa)}</td>'
        f"<td>{'n/a' if p.percent_agree is None else f'{100 * p.percent_agree:.0f}%'}</td></tr>"
        for p in r.pairs
    )
    out = (
        '<div id="rp-agreement">'
        f"<p>Fleiss' κ over {r.fleiss_items} candidates rated by all {len(r.curators)} curators:"
        f' <b id="rp-fleiss">{_k(r.fleiss)}</b></p>'
        "<table class='rp-table'><tr><th>curator A</th><th>curator B</th><th>shared</th>"
        f"<th>Cohen's κ</th><th>agree</th></tr>{rows}</table>"
    )
    for p in r.pairs:
        if not p.shared:  # nothing in common: an all-zero matrix says nothing
            continue
        head = "".join(f"<th>{t}</th>" for t in RATING_TIERS)
        body = "".join(
            f"<tr><th>{RATING_TIERS[i]}</th>" + "".join(f"<td>{n}</td>" for n in row) + "</tr>"
            for i, row in enumerate(p.matrix)
        )
        out += (
            f"<h4>Confusion: {esc(p.a)} (rows) × {esc(p.b)} (columns)</h4>"
            f"<table class='rp-table rp-confusion'><tr><th></th>{head}</tr>{body}</table>"
        )
    goto = link or (lambda i: i)
    links = " ".join(
        f'<a href="#" data-rp-goto="{goto(i)}">#{i}</a>' for i in r.disagreements[:200]
    )
    out += (
        f"<h4>Disagreements to resolve: {len(r.disagreements)}</h4>"
        f'<div class="rp-disagree">{links or "none"}</div></div>'
    )
    return out


def count_table(title: str, counts: dict[str, int], css: str) -> str:
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{n}</td></tr>" for k, n in counts.items())
    return (
        f'<table class="rp-table rp-{css}"><tr><th>{esc(title)}</th><th>n</th></tr>'
        f"{rows or '<tr><td colspan=2>none</td></tr>'}</table>"
    )
