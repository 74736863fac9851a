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
    depth = 0
    for i, c, in_string in _scan(text, start):
        if in_string:
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _relaxed(obj: str) -> str:
    """JSON with comments and trailing commas removed (outside strings)."""
    out: list[str] = []
    closes_next = False  # the next character that is not white space closes an object or array
    for _, c, in_string in reversed(list(_scan(obj, 0))):  # backwards: what follows comes first
        if c == "," and closes_next and not in_string:
            closes_next = False
            continue
        out.append(c)
        if in_string or not c.isspace():
            closes_next = not in_string and c in "}]"
    return "".join(reversed(out))


def _scan(text: str, start: int) -> Iterator[tuple[int, str, bool]]:
    """(index, character, inside a string) of every character from `start` that is not part
    of a `//` or `/* */` comment; a backslash and the character it escapes are both inside."""
    i, in_string = start, False
    while i < len(text):
        c = text[i]
        if in_string:
            yield i, c, True
            if c == "\\" and i + 1 < len(text):
                i += 1
                yield i, text[i], True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            yield i, c, True
        elif text.startswith("//", i):
            nl = text.find("\n", i)
            i = len(text) if nl < 0 else nl
            continue
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = len(text) if close < 0 else close + 2
            continue
        else:
            yield i, c, False
        i += 1


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
