"""What blind mode does to text a curator reads: programs lose their comments (a coder often
signs its work, e.g. `// Kimi-K3 …`) and every known model name is masked wherever it is
still written (a string literal, a critique's wording).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "[model]"


def strip_js_comments(source: str) -> str:
    """The program without `//` and `/* */` comments; string and template literals are kept
    as they are. Regex literals are not parsed (a `//` inside one is rare in sketches)."""
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        two = source[i : i + 2]
        if c in "\"'`":
            end = _string_end(source, i)
            out.append(source[i:end])
            i = end
        elif two == "//":
            while i < n and source[i] != "\n":
                i += 1
        elif two == "/*":
            end = source.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    # drop the lines that held only a comment, and trailing blanks left behind
    lines = [line.rstrip() for line in "".join(out).split("\n")]
    kept = [
        line
        for line, was in zip(lines, source.split("\n"), strict=False)
        if line or not was.strip()
    ]
    return "\n".join(kept).strip("\n") + "\n"


def _string_end(source: str, start: int) -> int:
    quote, i = source[start], start + 1
    while i < len(source):
        if source[i] == "\\":
            i += 2
            continue
        if source[i] == quote:
            return i + 1
        if source[i] == "\n" and quote != "`":
            return i  # an unterminated string ends at the line
        i += 1
    return len(source)


def name_variants(names: Iterable[str]) -> list[str]:
    """Each name and its path parts ('vendor/kimi-k3' -> also 'kimi-k3'), longest first."""
    out = set()
    for name in names:
        if not name:
            continue
        out.add(name)
        out.update(p for p in re.split(r"[/:@]", name) if len(p) >= 3)
    return sorted(out, key=len, reverse=True)


def mask_names(text: str, names: Iterable[str]) -> str:
    """`text` with every (case-insensitive) occurrence of the names replaced by MASK."""
    variants = name_variants(names)
    if not variants or not text:
        return text
    pattern = re.compile("|".join(re.escape(v) for v in variants), re.IGNORECASE)
    return pattern.sub(MASK, text)
