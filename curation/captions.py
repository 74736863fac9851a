"""Text the studio prints from data it did not write (photo credits, file names, titles,
notes, messages quoting them): one function, `caption`, makes each safe to show.

Escaping stops markup; it does not stop a U+202E RIGHT-TO-LEFT OVERRIDE in a photo credit
from reversing everything after it on the line (so "by Ann · CC-BY" could read as another
licence, or a note as another tier). Every bidirectional control is dropped first.
"""

from __future__ import annotations

import re

from refpool.core.contracts import Photo
from refpool.core.html import esc

# LRE RLE PDF LRO RLO, LRI RLI FSI PDI, LRM RLM, and the Arabic letter mark
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def neutral(text: object) -> str:
    """`text` without bidirectional controls (None as empty)."""
    return BIDI_CONTROLS.sub("", "" if text is None else str(text))


def caption(text: object) -> str:
    """`text` as HTML: bidi controls dropped, then escaped. Use it for every caption."""
    return esc(neutral(text))


def message_html(message: str, level: str = "info") -> str:
    if not message:
        return '<div class="rp-msg rp-empty"></div>'
    return f'<div class="rp-msg rp-{esc(level)}" role="status">{caption(message)}</div>'


def photo_figure(photo: Photo | None, photo_url: str | None, problem: str | None) -> str:
    """The source photo as the studio shows it beside a painting: the image (or why it is
    missing), its file name, licence and author, and a link to its page (web links only)."""
    image = (
        f'<img class="rp-photo-img" src="{esc(photo_url)}" alt="source photo">'
        if photo_url
        else f'<div class="rp-missing">{caption(problem or "no photo")}</div>'
    )
    credit = (
        " · ".join(caption(x) for x in (photo.licence_label, photo.author) if x) if photo else ""
    )
    link = (
        f' · <a href="{esc(photo.source_url)}" target="_blank" rel="noopener noreferrer">source</a>'
        if photo and photo.source_url.startswith(("http://", "https://"))
        else ""
    )
    name = caption(photo.file_name if photo else "")
    return f'<figure class="rp-photo">{image}<figcaption>{name}<br>{credit}{link}</figcaption></figure>'
