"""Reading a VLM critic's JSON leniently: what models actually send, not what we asked for.

Accepted: a fenced or bare object, prose (and more braces) around it, trailing commas, `//`
and `/* */` comments, curly quotes (refpool.core.loose_json), scores as numbers or strings
("6", "6/10", "60%", "7.5 out of 10"), scores flat, under "scores"/"ratings" or nested deeper
({"critique": {"scores": ...}}), keys in any case, spaced or underscored, British or American
spelling (watercolor, color). The scale of bare numbers is read per reply (0-10, 0-100, 0-1,
or the one the reply declares, e.g. "scale": "1-5") and mapped to 0-10, never clamped: a
score outside its scale, or numbers that fit two scales alike, make the reply unusable, and
the caller falls back to the heuristic critique, saying why. Only the final answer is read,
never the reasoning (refpool.core.reply).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from refpool.core import loose_json
from refpool.core.contracts import Critique
from refpool.core.reply import strip_reasoning

SCORE_KEYS = ("fidelity", "watercolour", "composition", "coverage")
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"'})
_SCORE = re.compile(r"(-?\d+(?:\.\d+)?)\s*(%|(?:/|out\s+of)\s*(\d+(?:\.\d+)?))?", re.I)


def _key(name: str) -> str:
    key = re.sub(r"[^a-z]", "", str(name).lower())
    return key.replace("color", "colour")


# A score as read: its value and the scale it says it is on (None: a bare number).
Score = tuple[float, float | None]


def _score(value: Any) -> Score:
    if isinstance(value, bool):
        raise ValueError("a score is true/false, not a number")
    if isinstance(value, (int, float)):
        return float(value), None
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
        return number, 100.0
    if m.group(3) and float(m.group(3)) > 0:
        return number, float(m.group(3))
    return number, None


def _declared(tables: list[dict[str, Any]]) -> tuple[float, float] | None:
    """The scale a reply states for its bare numbers ("scale": "1-5", "out_of": 100)."""
    for table in tables:
        for name in ("scale", "outof", "maxscore", "max", "range", "scoringscale"):
            value = table.get(name)
            numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", str(value or ""))]
            if numbers and numbers[-1] > 0:
                low = numbers[0] if len(numbers) > 1 else 0.0
                return low, numbers[-1]
    return None


def _bare_scale(values: list[float]) -> tuple[float, float]:
    """The scale bare numbers are on, read from the numbers themselves (we ask for 0-10).

    Raises ValueError when they fit two scales alike: all at most 5 (0-10, or 1-5?), whole
    0s and 1s (0-1 or 0-10?), or a top score just past 10 (an overshoot, or a low 0-100?).
    """
    top = max(values)
    if top <= 1 and any(v != int(v) for v in values):
        return 0.0, 1.0
    if top <= 5:
        raise ValueError(
            f"the scores {values} fit 0-10 and 1-5 alike: the scale is ambiguous"
            " (the reply should say its scale, or score 0-10)"
        )
    if top <= 10:
        return 0.0, 10.0
    if 20 <= top <= 100:
        return 0.0, 100.0
    raise ValueError(f"the score {top:g} is beyond 0-10 and low for 0-100: the scale is ambiguous")


def _to_ten(key: str, value: float, scale: tuple[float, float]) -> float:
    low, high = scale
    if not low <= value <= high:
        raise ValueError(f"the {key} score {value:g} is outside its scale {low:g}-{high:g}")
    return round((value - low) * 10 / (high - low), 1)


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


def _levels(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The object and every object inside it, outermost first, keys normalised."""
    queue: list[Any] = [data]
    while queue:
        item = queue.pop(0)
        if isinstance(item, dict):
            flat = {_key(k): v for k, v in item.items()}
            yield flat
            queue.extend(v for v in flat.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            queue.extend(v for v in item if isinstance(v, dict))


def _scores(levels: list[dict[str, Any]]) -> tuple[dict[str, float], str | None]:
    """(scores 0-10, the scale note) from the first level that holds all four scores."""
    missing = SCORE_KEYS[0]
    for flat in levels:
        table = _score_table(flat)
        found = {key: _find(table, key) for key in SCORE_KEYS}
        absent = [key for key, value in found.items() if value is None]
        if absent:
            missing = absent[0] if len(absent) < len(SCORE_KEYS) else missing
            continue
        read = {key: _score(value) for key, value in found.items()}
        bare = [v for v, scale in read.values() if scale is None]
        scale = _declared([table, *levels]) or (_bare_scale(bare) if bare else (0.0, 10.0))
        scores = {
            key: _to_ten(key, v, (0.0, own) if own else scale) for key, (v, own) in read.items()
        }
        low, high = scale
        note = None if (low, high) == (0.0, 10.0) or not bare else f"{low:g}-{high:g}"
        return scores, note
    raise ValueError(f"the critic's JSON has no score for {missing!r}")


def _text_field(levels: list[dict[str, Any]], names: tuple[str, ...]) -> str:
    for flat in levels:
        for k in names:
            if k in flat and isinstance(flat[k], (str, list)):
                value = flat[k]
                return " ".join(map(str, value)) if isinstance(value, list) else value.strip()
    return ""


def _from_data(data: dict[str, Any], critic: str) -> Critique:
    levels = list(_levels(data))
    scores, scale = _scores(levels)
    advice = _text_field(levels, ("advice", "advise", "suggestions", "feedback"))
    summary = _text_field(levels, ("summary", "summarise", "summarize", "verdict"))
    if scale:  # said where it shows: the scores were mapped, not taken as they came
        summary = f"{summary} (scored on {scale}, mapped to 0-10)".strip()
    return Critique(critic, scores, advice, summary)


def parse_critique(text: str, critic: str) -> Critique:
    """The critique in a critic's reply; raises ValueError when none is usable."""
    if not text or not text.strip():
        raise ValueError("the critic returned no content")
    text = strip_reasoning(text).translate(_CURLY)
    fenced = re.findall(r"```[ \t]*(?:json|jsonc|json5)?[ \t]*\r?\n(.*?)```", text, re.S | re.I)
    problems = []
    for source in [*fenced, text]:
        for start, end in loose_json.objects(source):
            try:
                data = loose_json.load(source[start:end])
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


# What a max_tokens cut cost a critique's advice.
ADVICE_WHOLE, ADVICE_PARTIAL, ADVICE_LOST = "", "partial", "lost"


def parse_cut_critique(text: str, critic: str) -> tuple[Critique, str]:
    """The critique in a reply cut by max_tokens, read as far as it came, and what the cut
    cost its advice (ADVICE_WHOLE, ADVICE_PARTIAL: up to its last complete sentence, or
    ADVICE_LOST). Raises ValueError when not even the four scores came."""
    read = [
        (_closed(closed, critic), trimmed)
        for closed, trimmed in loose_json.close_cut(strip_reasoning(text).translate(_CURLY))
    ]
    found = [(critique, trimmed) for critique, trimmed in read if critique is not None]
    if not found:  # the object closed before the cut (prose after it was cut), or no scores
        whole = parse_critique(text, critic)
        return whole, ADVICE_WHOLE if whole.advice else ADVICE_LOST
    critique, trimmed = found[0]
    if not critique.advice:
        return critique, ADVICE_LOST
    complete = found[-1][0] if len(found) > 1 else None  # up to its last complete member
    cut_short = trimmed and (complete is None or critique.advice != complete.advice)
    return critique, ADVICE_PARTIAL if cut_short else ADVICE_WHOLE


CUT_NOTE = "critic reply cut by max_tokens: advice {}; raise max_tokens for the critic"


def cut_critique(text: str, critic: str, stand_in: Critique) -> Critique:
    """The critique of a reply cut by max_tokens, saying so in its summary: its scores and
    what came of its advice (lost advice is the heuristic `stand_in`'s, named as such).
    Raises ValueError when not even the scores came."""
    critique, cost = parse_cut_critique(text, critic)
    if cost == ADVICE_LOST:
        note = CUT_NOTE.format("lost, the heuristic critic's used")
        return Critique(
            critic, critique.scores, stand_in.advice, f"{critique.summary} ({note})".strip()
        )
    note = CUT_NOTE.format("partial" if cost == ADVICE_PARTIAL else "complete, the rest lost")
    return Critique(
        critic, critique.scores, critique.advice, f"{critique.summary} ({note})".strip()
    )


def _closed(text: str, critic: str) -> Critique | None:
    try:
        data = loose_json.load(text)
        return _from_data(data, critic) if isinstance(data, dict) else None
    except (ValueError, TypeError, AttributeError):
        return None
