"""Reading a judge's verdict from a reply read by refpool.core.reply: which painting won?

Evidence is read strongest first, and the first strength that names a painting decides:
  1. JSON (`{"winner": "b"}`, "Image B"), in the answer or as a tool call's arguments; MT-Bench's
     `[[A]]`; a labelled answer ("Winner: A"); `<answer>B</answer>`; LaTeX's `\\boxed{B}` (also
     `\\boxed{\\text{B}}`); a cut-off JSON verdict;
  2. two scores ("A: 6/10, B: 8/10", "Image A: 7, Image B: 5", "Score A = 6.5; Score B = 8"):
     the higher wins, equal scores name neither;
  3. a phrase ("Image B is better", "I prefer A");
  4. a bare `A` on the first line.
Evidence of one strength that names both paintings, or a verdict that names neither (a tie),
is no verdict: the pair stays unresolved. Reasoning never counts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from refpool.core import loose_json
from refpool.core.reply import Reply, strip_reasoning

NO_SIDE = "?"  # a verdict that names neither painting: a tie, "both", "C"

# How judges name a painting: A/B, first/second, 1/2 (a bare letter only in capitals).
_SIDE = {"a": "A", "b": "B", "1": "A", "2": "B", "first": "A", "second": "B"}
_NOUN = r"(?:image|painting|picture|option|candidate|watercolou?r)"
_PICK = rf"(?:{_NOUN}\s+#?([ab12])\b|(?:the\s+)?(first|second)\b(?:\s+{_NOUN})?|(?-i:\b([AB])\b))"
_KEYS = ("winner", "verdict", "choice", "answer", "better", "preferred", "preference", "best")
_REASON_KEYS = ("reason", "explanation", "rationale", "why")
# Strong: MT-Bench's [[A]], a labelled answer, a cut-off JSON verdict. Weak: a phrase.
_STRONG = (
    re.compile(r"\[\[\s*([AB])\s*\]\]", re.I),
    re.compile(
        rf"\b(?:final\s+)?(?:{'|'.join(_KEYS)}|better\s+(?:one|{_NOUN}))[\"']?\s*(?:is|:|=)"
        rf"\s*[\"'*]*\s*{_PICK}",
        re.I,
    ),
)
# Answers in a wrapper whose whole content is the verdict: <answer>B</answer>, \boxed{\text{B}}.
_WRAPPED = (
    re.compile(r"<(answer|winner|verdict|choice)>\s*(.*?)\s*</\1>", re.S | re.I),
    re.compile(r"\\boxed\s*\{\s*((?:\\(?:text|textbf|mathrm|mathbf)\s*\{[^{}]*\}|[^{}])*)\}"),
)
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}")
_SCORE = re.compile(
    rf"(?:\bscore\s+(?:for\s+|of\s+)?)?(?:\b{_NOUN}\s+)?(?-i:\b([AB])\b)(?:\s+score)?[\"'*]*"
    r"\s*[:=]\s*[\"'*]*\s*(\d+(?:\.\d+)?)(?:\s*/\s*(\d+(?:\.\d+)?))?",
    re.I,
)
_WEAK = (
    re.compile(
        rf"{_PICK}\s+(?:is|looks|seems|appears|reads|feels)\s+(?:\w+ly\s+)?(?:the\s+)?"
        r"(?:better|stronger|superior|preferable|preferred|winner|more\s+(?:successful|"
        r"convincing|accomplished|skill?ful))\b",
        re.I,
    ),
    re.compile(rf"\b(?:prefer|choose|chose|pick|select|go\s+with)\s+{_PICK}", re.I),
    re.compile(rf"{_PICK}\s+wins\b", re.I),
)
_NEGATED = re.compile(r"\b(?:not|nor|neither|never|n't)\W+(?:\w+\W+)?$", re.I)
_BARE = re.compile(rf"^[\W_]*(?:(?:winner|answer|verdict)\W+)?{_PICK}[\W_]*$", re.I)


@dataclass(frozen=True)
class Reading:
    """What a reply said: the winner (A, B or None), the reason, and the sides it named."""

    winner: str | None
    reason: str
    sides: tuple[str, ...] = ()  # every side named by the deciding evidence ("?" for neither)

    @property
    def named_both(self) -> bool:
        return len(set(self.sides)) > 1

    @property
    def named_neither(self) -> bool:
        return bool(self.sides) and set(self.sides) == {NO_SIDE}


def _side(match: re.Match[str]) -> str | None:
    picked = next((g for g in reversed(match.groups()) if g), None)
    return _SIDE.get(picked.lower()) if picked else None


def _value_side(value: Any) -> str:
    """A verdict's value as A or B; "?" for a value that names neither (a tie, "both")."""
    plain = _LATEX_TEXT.sub(r"\1", str(value)).strip()
    bare = plain.strip(" \t\n\"'.*()[]$").lower()
    if bare in _SIDE:  # "b", "2", "Second"
        return _SIDE[bare]
    found = _BARE.match(plain) or re.match(rf"^\W*{_PICK}", plain, re.I)
    side = _side(found) if found else None
    return side or NO_SIDE


def _mapping_verdict(item: Mapping[Any, Any]) -> tuple[str | None, str]:
    """(side named by a verdict key, its reason) of one JSON object (None: no verdict key)."""
    keys = {str(k).lower(): v for k, v in item.items()}
    named = [keys[k] for k in _KEYS if k in keys and not isinstance(keys[k], dict)]
    why = next((keys[k] for k in _REASON_KEYS if k in keys), "")
    return (_value_side(named[0]) if named else None), str(why)


def _data_verdicts(data: Any) -> tuple[list[str], str]:
    """(sides, reason) of parsed JSON: the object itself and the objects directly inside it."""
    if not isinstance(data, Mapping):
        return [], ""
    sides, reason = [], ""
    for item in [data, *(v for v in data.values() if isinstance(v, Mapping))]:
        side, why = _mapping_verdict(item)
        if side is not None:
            sides.append(side)
            reason = reason or why
    return sides, reason


def _json_verdicts(answer: str) -> tuple[list[str], str, str]:
    """(sides named by JSON objects, the reason given, the text outside those objects)."""
    sides: list[str] = []
    reason, outside, last = "", [], 0
    for start, end in loose_json.objects(answer):
        try:
            data = loose_json.load(answer[start:end])
        except ValueError:
            continue
        found, why = _data_verdicts(data)
        sides += found
        reason = reason or why
        outside.append(answer[last:start])
        last = end
    outside.append(answer[last:])
    return sides, reason, "".join(outside)


def _phrase_sides(text: str, patterns: tuple[re.Pattern[str], ...]) -> list[str]:
    sides = []
    for pattern in patterns:
        for match in pattern.finditer(text):
            if _NEGATED.search(text[max(0, match.start() - 24) : match.start()]):
                continue  # "neither A nor B is better"
            side = _side(match)
            if side:
                sides.append(side)
    return sides


def _wrapped_sides(text: str) -> list[str]:
    """Sides named inside an answer wrapper (<answer>…</answer>, \\boxed{…})."""
    return [_value_side(m.group(m.lastindex or 0)) for p in _WRAPPED for m in p.finditer(text)]


def _score_sides(text: str) -> list[str]:
    """The side with the higher of two scores ("A: 6/10, B: 8/10"); "?" when they are equal;
    nothing unless both paintings got a score (the last one given counts)."""
    scores: dict[str, float] = {}
    for match in _SCORE.finditer(text):
        value, out_of = float(match.group(2)), float(match.group(3) or 1)
        if out_of > 0:
            scores[match.group(1)] = value / out_of
    if set(scores) != {"A", "B"}:
        return []
    if scores["A"] == scores["B"]:
        return [NO_SIDE]
    return ["A" if scores["A"] > scores["B"] else "B"]


def read_text(text: str, tool_args: tuple[Any, ...] = ()) -> Reading:
    """The verdict in a final answer (and the tool calls' arguments): see the module's list."""
    answer = strip_reasoning(text or "").strip()
    json_sides, reason, outside = _json_verdicts(answer)
    for args in tool_args:  # a verdict given as a tool call: its arguments are JSON evidence
        found, why = _json_verdicts(args)[:2] if isinstance(args, str) else _data_verdicts(args)
        json_sides += found
        reason = reason or why
    strong = json_sides + _phrase_sides(outside, _STRONG) + _wrapped_sides(outside)
    first_line = next((line for line in answer.splitlines() if line.strip()), "")
    bare = _BARE.match(first_line)
    levels = (
        strong,
        _score_sides(outside),
        _phrase_sides(outside, _WEAK),
        [_side(bare) or NO_SIDE] if bare else [],
    )
    for sides in levels:
        if sides:
            winner = sides[0] if len(set(sides)) == 1 and sides[0] != NO_SIDE else None
            return Reading(winner, (reason or answer)[:200], tuple(sides))
    return Reading(None, answer[:200])


def read_verdict(reply: Reply) -> Reading:
    """The verdict of a reply: its answer and its tool calls' arguments (never the reasoning)."""
    return read_text(reply.answer, reply.tool_args)


def parse_verdict(text: str) -> tuple[str | None, str]:
    """(winner A/B or None, reason) from a reply's final answer (reasoning never counts)."""
    reading = read_text(text)
    return reading.winner, reading.reason
