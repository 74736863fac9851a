"""A blind curator's page, built from a whitelist: the painting, the source photo and its
credit, the curator's own counter ("painting 17 of 120"), their own rating and note.

Nothing else from the candidate is read here: no model, program, critique, prompt, score,
ladder, round or seed, and no global id. Ids become the curator's tokens
(curation/blind_ids.py), so the page's attributes name no global id or counter either. A
model name can only leak through a field listed here, so no list of spellings is needed.
"""

from __future__ import annotations

import re

from curation.blind_ids import BlindIds
from curation.captions import caption, message_html, photo_figure
from curation.commands import command_attrs
from curation.grid import Grid
from curation.service import Screen
from refpool.core.html import esc

KEYS_HELP = (
    "<b>1</b> love · <b>2</b> okay · <b>3</b> reject · <b>4</b>/<b>space</b> skip · "
    "<b>z</b> undo · <b>n</b> note · <b>←/→</b> previous/next · <b>?</b> all keys"
)
# how the service layer's messages name a candidate: "#12", "candidate 12"
_NAMED_ID = re.compile(r"(?:#|\bcandidate )(\d+)")


def counter_words(queue: list[int], text: str) -> str:
    """`text` with each candidate id replaced by its place in this curator's queue."""
    places = {cid: n for n, cid in enumerate(queue, 1)}

    def word(m: re.Match[str]) -> str:
        n = places.get(int(m.group(1)))
        return f"painting {n}" if n else "a painting"

    return _NAMED_ID.sub(word, text)


def _head(s: Screen, tokens: BlindIds) -> str:
    d = s.detail
    attrs = {
        "data-cid": tokens.token(d.id) if d else "",
        "data-seen": tokens.seen_token(d.seen) if d else 0,
        "data-nonce": s.nonce,
        "data-prefetch": " ".join(s.prefetch),
        "data-curator": s.curator,
        "data-url": (d.png_url or "") if d else "",
        "data-next-cid": tokens.token(s.next_id) if s.next_id else "",
        "data-next-url": s.next_url or "",
        "data-chain": " ".join(f"{tokens.token(cid)}|{url}" for cid, url in s.chain),
        "data-level": s.level,
        "data-mode": "blind",
    }
    for name, delta in (("fwd", "1"), ("back", "-1")):
        if delta in s.neighbours:
            cid, url = s.neighbours[delta]
            attrs[f"data-{name}-cid"], attrs[f"data-{name}-url"] = tokens.token(cid), url
    spelled = "".join(f' {k}="{esc(v)}"' for k, v in attrs.items())
    commands = command_attrs(s.tokens, s.command, s.outcome, lambda i: str(tokens.token(i)))
    return f'<div id="rp-view"{spelled}{commands}>'


def _status(s: Screen) -> str:
    top = message_html(counter_words(s.queue, s.message), s.level)
    if s.progress:
        pct = round(100 * s.progress.fraction())
        top += (
            f'<div class="rp-progress"><span>{esc(s.progress.text())}</span>'
            f'<span class="rp-bar"><span style="width:{pct}%"></span></span></div>'
        )
    out = f'<div class="rp-status">{top}</div>'
    chips = s.filters.chips()
    if chips:
        out += '<div class="rp-chips">Filtered: ' + "".join(
            f'<span class="rp-chip">{caption(c)}</span>' for c in chips
        )
        out += "</div>"
    return out


def blind_screen_html(s: Screen, tokens: BlindIds) -> str:
    """The big view for a blind curator (the same hooks for the keys as the open view)."""
    d = s.detail
    if d is None:
        return _head(s, tokens) + _status(s) + "</div>"
    token = tokens.token(d.id)
    render = (
        f'<img id="rp-img" src="{esc(d.png_url)}" data-cid="{token}" alt="the painting">'
        if d.png_url
        else f'<div id="rp-img" class="rp-missing" data-cid="{token}">'
        f"{caption(counter_words(s.queue, d.png_problem or ''))}</div>"
    )
    mine = esc(d.my_tier or "unrated")
    counter = f"painting {s.position} of {s.queue_len}" if s.position else "not in your queue"
    meta = (
        f'<b class="rp-counter">{counter}</b> · you: <span class="rp-tier rp-{mine}">{mine}</span>'
    )
    note = f'<div class="rp-note">your note: {caption(d.my_note)}</div>' if d.my_note else ""
    return (
        _head(s, tokens)
        + _status(s)
        + f'<div class="rp-meta">{meta}</div>'
        + '<div class="rp-main">'
        + f'<figure class="rp-render">{render}</figure>'
        + photo_figure(d.photo, d.photo_url, d.photo_problem)
        + "</div>"
        + note
        + f'<div class="rp-keys">{KEYS_HELP}</div></div>'
    )


def tile_html(cid: int, label: str, tier: str | None, thumb_url: str | None, alt: str) -> str:
    """One grid tile: focusable, its rated state in words and colour (see static/everyday.js)."""
    state = f"rated {tier}" if tier else "unrated"
    img = (
        f'<img src="{esc(thumb_url)}" loading="lazy" alt="{esc(alt)}">'
        if thumb_url
        else '<div class="rp-missing">missing PNG</div>'
    )
    badge = f'<span class="rp-tier rp-{esc(tier or "none")}">{esc(tier or "unrated")}</span>'
    return (
        f'<figure class="rp-tile{" rp-rated" if tier else ""}" data-cid="{cid}"'
        f' data-tier="{esc(tier or "")}" tabindex="0" role="button"'
        f' aria-label="{esc(label)}, {state}">{img}'
        f"<figcaption>{label} {badge}</figcaption></figure>"
    )


def blind_grid_html(g: Grid, tokens: BlindIds) -> str:
    """The grid for a blind curator: tokens for ids, the queue counter for captions."""
    first = (g.page - 1) * g.page_size
    tiles = "".join(
        tile_html(tokens.token(t.id), f"painting {first + n}", t.my_tier, t.thumb_url, "a painting")
        for n, t in enumerate(g.tiles, 1)
    )
    return grid_frame(g, tiles)


def grid_frame(g: Grid, tiles: str) -> str:
    """The grid around its tiles (open and blind alike): message, progress, paging, help."""
    progress = f'<div class="rp-progress">{esc(g.progress.text())}</div>' if g.progress else ""
    return (
        f'<div id="rp-grid" data-page="{g.page}" data-pages="{g.pages}">'
        + message_html(g.message, g.level)
        + progress
        + f'<div class="rp-gridinfo">page {g.page}/{g.pages} · click thumbnails to select,'
        " shift-click for a range · arrow keys move, Enter opens, space selects</div>"
        + f'<div class="rp-tiles">{tiles}</div></div>'
    )
