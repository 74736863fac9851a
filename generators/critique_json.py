"""Reading a VLM critic's JSON leniently: what models actually send, not what we asked for.

Accepted: a fenced or bare object, prose (and more braces) around it, trailing commas, `//`
and `/* */` comments, curly quotes, scores as numbers or strings ("6", "6/10", "60%", "7.5 out
of 10"), scores flat or under "scores"/"ratings", keys in any case, spaced or underscored,
British or American spelling (watercolor, color). Unusable replies raise ValueError, and the
caller falls back to the heuristic critique.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

from refpool.core.contracts import Critique
from renderer.extract import strip_reasoning

SCORE_KEYS = ("fidelity", "watercolour", "composition", "coverage")
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"'})
_SCORE = re.compile(r"(-?\d+(?:\.\d+)?)\s*(%|(?:/|out\s+of)\s*(\d+(?:\.\d+)?))?", re.I)


def _objects(text: str) -> Iterator[str]:
    """Every balanced {...} in the text, outermost first, string- and comment-aware."""
    start = text.find("{")
    while start >= 0:
        end = _match(text, start)
        if end is None:
            return
        yield text[start : end + 1]
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


def _load(obj: str) -> Any:
    """JSON, relaxed; failing that a Python-style literal ('single quotes', True, None)."""
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


def _key(name: str) -> str:
    key = re.sub(r"[^a-z]", "", str(name).lower())
    return key.replace("color", "colour")


def _score(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("a score is true/false, not a number")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):  # {"score": 6, "why": "..."}
        inner = {_key(k): v for k, v in value.items()}
        for k in ("score", "value", "rating"):
            if k in inner:
                return _score(inner[k])
    m = _SCORE.search(str(value))
    if not m:
        raise ValueError(f"the score {value!r} is not a number")
    number = float(m.group(1))
    if m.group(2) == "%":
        return number / 10
    if m.group(3):
        scale = float(m.group(3))
        return number * 10 / scale if scale else number
    return number


def _clamp10(x: float) -> float:
    return round(max(0.0, min(10.0, x)), 1)


def _score_table(flat: dict[str, Any]) -> dict[str, Any]:
    """The scores, flat or nested, as {normalised name: value}; a list of
    {"criterion": name, "score": n} items is accepted too."""
    for k in ("scores", "score", "ratings", "rating", "criteria", "evaluation"):
        value = flat.get(k)
        if isinstance(value, dict):
            return {_key(n): v for n, v in value.items()} | flat
        if isinstance(value, list):
            table = {}
            for item in value:
                if isinstance(item, dict):
                    inner = {_key(n): v for n, v in item.items()}
                    name = next(
                        (
                            inner[n]
                            for n in ("criterion", "name", "category", "aspect", "key")
                            if n in inner
                        ),
                        None,
                    )
                    if name is not None:
                        table[_key(name)] = inner
            return table | flat
    return flat


def _find(table: dict[str, Any], key: str) -> Any:
    if key in table:
        return table[key]
    near = [v for name, v in table.items() if name.startswith(key) or key in name]
    return near[0] if near else None


def _from_data(data: dict[str, Any], critic: str) -> Critique:
    flat = {_key(k): v for k, v in data.items()}
    table = _score_table(flat)
    values = {}
    for key in SCORE_KEYS:
        value = _find(table, key)
        if value is None:
            raise ValueError(f"the critic's JSON has no score for {key!r}")
        values[key] = _score(value)
    if all(10 < v <= 100 for v in values.values()):  # scored out of 100
        values = {k: v / 10 for k, v in values.items()}
    scores = {k: _clamp10(v) for k, v in values.items()}
    advice = next(
        (flat[k] for k in ("advice", "advise", "suggestions", "feedback") if k in flat), ""
    )
    if isinstance(advice, list):
        advice = " ".join(str(a) for a in advice)
    summary = next(
        (flat[k] for k in ("summary", "summarise", "summarize", "verdict") if k in flat), ""
    )
    return Critique(critic, scores, str(advice).strip(), str(summary).strip())


def parse_critique(text: str, critic: str) -> Critique:
    """The critique in a critic's reply; raises ValueError when none is usable."""
    if not text or not text.strip():
        raise ValueError("the critic returned no content")
    text = strip_reasoning(text).translate(_CURLY)
    fenced = re.findall(r"```[ \t]*(?:json|jsonc|json5)?[ \t]*\r?\n(.*?)```", text, re.S | re.I)
    problems = []
    for source in [*fenced, text]:
        for obj in _objects(source):
            try:
                data = _load(obj)
            except ValueError as exc:
                problems.append(f"not JSON ({exc})")
                continue
            if not isinstance(data, dict):
                continue
            try:
                return _from_data(data, critic)
            except (ValueError, TypeError, AttributeError) as exc:
                problems.append(str(exc))
    if not problems:
        raise ValueError("the critic's reply holds no JSON object")
    raise ValueError(problems[0])
