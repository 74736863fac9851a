"""Text the studio prints from data it did not write (photo credits, file names, titles,
notes, messages quoting them): one function, `caption`, makes each safe to show.

Escaping stops markup; it does not stop a U+202E RIGHT-TO-LEFT OVERRIDE in a photo credit
from reversing everything after it on the line (so "by Ann · CC-BY" could read as another
licence, or a note as another tier). Every bidirectional control is dropped first.
"""

from __future__ import annotations

import re

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
