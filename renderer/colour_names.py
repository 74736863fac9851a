"""CSS colour names, as p5 2.x knows them: read from the colorjs.io that p5 ships with.

The sketch realm reads a colour's channels (red(), hue(), ...) where the sketch asks, so it
needs the same names p5 parses ("rebeccapurple", "seagreen"). They are read from the
installed colorjs.io (`npm ci`), never copied into refpool.
"""

from __future__ import annotations

import re
from functools import cache

from renderer.libserver import node_modules

_ENTRY = re.compile(r"^\s*([a-z]+):\s*\[([^\]]*)\]", re.MULTILINE)


def _channel(term: str) -> int:
    """One channel of colorjs.io's table ("0", "1" or "N / 255") as 0..255."""
    term = term.strip()
    if "/" in term:
        return int(term.split("/")[0].strip())
    return round(float(term) * 255)


@cache
def css_colour_names() -> dict[str, list[int]]:
    """name -> [r, g, b] (0..255), plus "transparent" (its alpha is 0 in the realm)."""
    text = (node_modules() / "colorjs.io" / "src" / "keywords.js").read_text(encoding="utf-8")
    names = {
        name: [_channel(t) for t in body.split(",")]
        for name, body in _ENTRY.findall(text)
        if body.count(",") == 2
    }
    names["transparent"] = [0, 0, 0]
    return names
