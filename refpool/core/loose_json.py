"""JSON as models write it inside prose: found by brace matching and read leniently.

A reply may hold prose and more braces around the object, `//` and `/* */` comments,
trailing commas, or a Python-style literal ('single quotes', True, None). Used by every role
that reads JSON from a reply (the critic's scores, the judge's verdict).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any


def objects(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every balanced {...} in the text, outermost first, in order;
    string- and comment-aware. Stops at the first object that never closes."""
    start = text.find("{")
    while start >= 0:
        end = _match(text, start)
        if end is None:
            return
        yield start, end + 1
        start = text.find("{", end + 1)


def _match(text: str, start: int) -> int | None:
    depth, i, quote = 0, start, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c == '"':
            quote = c
        elif text.startswith("//", i):
            nl = text.find("\n", i)
            i = len(text) if nl < 0 else nl
            continue
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = len(text) if close < 0 else close + 2
            continue
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _relaxed(obj: str) -> str:
    """JSON with comments and trailing commas removed (outside strings)."""
    out, i, quote = [], 0, ""
    while i < len(obj):
        c = obj[i]
        if quote:
            out.append(c)
            if c == "\\" and i + 1 < len(obj):
                out.append(obj[i + 1])
                i += 1
            elif c == quote:
                quote = ""
        elif c == '"':
            quote = c
            out.append(c)
        elif obj.startswith("//", i):
            nl = obj.find("\n", i)
            i = len(obj) if nl < 0 else nl
            continue
        elif obj.startswith("/*", i):
            close = obj.find("*/", i + 2)
            i = len(obj) if close < 0 else close + 2
            continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def load(obj: str) -> Any:
    """JSON, relaxed; failing that a Python-style literal. Raises ValueError."""
    relaxed = _relaxed(obj)
    try:
        return json.loads(relaxed)
    except ValueError as exc:
        pythonic = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", relaxed))
        pythonic = re.sub(r"\bnull\b", "None", pythonic)
        try:
            return ast.literal_eval(pythonic)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise exc from None
