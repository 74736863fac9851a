"""JSON as models write it inside prose: found by brace matching and read leniently.

A reply may hold prose and more braces around the object, `//` and `/* */` comments,
trailing commas, or a Python-style literal ('single quotes', True, None). Used by every role
that reads JSON from a reply (the critic's scores, the judge's verdict).
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

_Find = Callable[[str, str, int], int]  # str.find's shape: (text, what, from) -> index or -1


def objects(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every balanced {...} in the text that is not inside another, in order;
    string- and comment-aware from each `{`. A `{` that never closes (a stray one in the prose,
    one in a comment between objects, a reply cut off) is passed over, and the search goes on
    from the next `{`, so the objects after it are still found."""
    closes = _Closes(text)
    start = text.find("{")
    while start >= 0:
        end = closes.of(start)
        if end is None:
            start = text.find("{", start + 1)
        else:
            yield start, end + 1
            start = text.find("{", end + 1)


class _Closes:
    """Where the `{` at each index closes, scanning from it.

    Scans from different starts meet: once two reach the same state (index, inside a string)
    they go on alike, so a later scan takes the earlier one's answer there rather than reading
    the rest of the reply again. Each state is read once, which keeps a reply of thousands of
    unclosed `{` linear."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.closes: dict[int, int | None] = {}
        # per state: the innermost `{` still open when the scan that first came there did
        self.open_at = ([-1] * len(text), [-1] * len(text))  # [outside a string], [inside]
        self.found: dict[str, list[int]] = {}

    def of(self, start: int) -> int | None:
        """Index of the `}` that closes the `{` at `start`, or None if none does."""
        if start not in self.closes:
            self._scan_from(start)
        return self.closes[start]

    def _scan_from(self, start: int) -> None:
        text, stack = self.text, [start]
        i, in_string = start + 1, False
        while stack and i < len(text):
            earlier = self.open_at[in_string][i]
            if earlier >= 0:  # our innermost `{` closes where that scan's did
                end = self.closes[earlier]
                if end is None:
                    break
                self.closes[stack.pop()] = end
                i, in_string = end + 1, False
                continue
            self.open_at[in_string][i] = stack[-1]
            after, in_string_after = _step(text, i, in_string, self._find)
            if not in_string and after == i + 1 and text[i] in "{}":
                if text[i] == "{":
                    stack.append(i)
                else:
                    self.closes[stack.pop()] = i
            i, in_string = after, in_string_after
        for never_closed in stack:
            self.closes[never_closed] = None

    def _find(self, text: str, what: str, start: int) -> int:
        """str.find by bisection, so comments that never end cost no rescans."""
        if what not in self.found:
            self.found[what] = [m.start() for m in re.finditer(re.escape(what), text)]
        at = self.found[what]
        k = bisect.bisect_left(at, start)
        return at[k] if k < len(at) else -1


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
        after, in_string_after = _step(text, i, in_string)
        if in_string or after == i + 1:  # not a comment
            for k in range(i, after):
                yield k, text[k], in_string or in_string_after  # the opening quote is inside
        i, in_string = after, in_string_after


def _step(text: str, i: int, in_string: bool, find: _Find = str.find) -> tuple[int, bool]:
    """The scanner's one rule: from character i, (where it goes on, inside a string there).
    Outside a string, a comment is one step over all of it."""
    c = text[i]
    if in_string:
        if c == "\\":
            return min(i + 2, len(text)), True
        return i + 1, c != '"'
    if c == '"':
        return i + 1, True
    if text.startswith("//", i):
        nl = find(text, "\n", i)
        return (len(text) if nl < 0 else nl), False
    if text.startswith("/*", i):
        close = find(text, "*/", i + 2)
        return (len(text) if close < 0 else close + 2), False
    return i + 1, False


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


def close_cut(text: str) -> Iterator[tuple[str, bool]]:
    """Closings of a JSON object a reply cut off (max_tokens), best first, as (text, a cut
    string was kept up to its last sentence): the text as it came with its open string and
    brackets closed, then the text up to its last complete member, closed. The caller loads
    each in turn. Objects that close before the cut are passed over; nothing if none is cut."""
    start = text.find("{")
    if start < 0:
        return
    stack: list[str] = []
    safe = (start + 1, "}")  # where a cut keeps only complete members, and what closes it
    i, in_string, string_at = start, False, start
    while i < len(text):
        if not stack and text[i] != "{":  # prose between objects: its quotes open no string
            i += 1
            continue
        after, in_string_after = _step(text, i, in_string)
        if not in_string and after == i + 1 and text[i] in "{[]},":
            if text[i] in "{[":
                if not stack:  # a new top-level object
                    start, safe = i, (i + 1, "}")
                stack.append("}" if text[i] == "{" else "]")
            elif text[i] != "," and stack:
                stack.pop()
            closers = "".join(reversed(stack))
            safe = (i, closers) if text[i] == "," else (i + 1, closers)
        if in_string_after and not in_string:
            string_at = i
        i, in_string = after, in_string_after
    if not stack:
        return  # every object closed: nothing was cut
    closers = "".join(reversed(stack))
    if not in_string:
        yield text[start:].rstrip().rstrip(",") + closers, False
    else:
        kept = _sentences(text[string_at + 1 :])
        if kept:
            yield text[start : string_at + 1] + kept + '"' + closers, True
    yield text[start : safe[0]] + safe[1], False


def _sentences(cut: str) -> str:
    """A cut string's complete sentences ("" if none ended)."""
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", cut)]
    return cut[: ends[-1]] if ends else ""
