"""Judge styles for the fake vendor (tests/fake_vendor.py): verdicts in more forms, and judges
that give none for a reason the command must name.

Readable: a tool call's arguments, `<answer>B</answer>`, `\\boxed{B}`, `\\boxed{\\text{B}}`, and
two scores in three spellings; each wraps the true verdict (more paint wins, A when equal).
Unresolved: a refusal in `message.refusal`, a content-filter finish, refusals in German and
Chinese, an answer left in the reasoning, a moderation 400 on every call, and a judge that
refuses only the pairs holding the most-painted image (some pairs resolve, some do not).
Servers that refuse a structured-output mode: OpenAI's json_object without the word "json" in
the messages, and one that takes no response_format at all.
Each style is `style(nth, body)`, like the failure styles.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_vendor import Answer, completion
from fake_vendor_replies import message_answer

REFUSAL = "I can't compare these images."
MODERATION = {"error": {"message": "Input was flagged by the moderation system", "code": 400}}
JSON_WORD = (
    "'messages' must contain the word 'json' in some form, to use 'response_format' of type"
    " 'json_object'."
)
NO_RESPONSE_FORMAT = "response_format is not supported by this model"


def _images(body: dict) -> tuple[float, float]:
    from judge_fakes import request_images

    from renderer.gate import measure_coverage

    first, second = (measure_coverage(png) for png in request_images(body))
    return first, second


def _winner(body: dict) -> tuple[str, str]:
    """(winner, loser) by paint coverage, A when equal."""
    first, second = _images(body)
    return ("B", "A") if second > first + 1e-9 else ("A", "B")


def _say(wrap: Callable[[str, str], dict[str, Any]]) -> Callable[[int, dict], Answer]:
    return lambda nth, body: message_answer(wrap(*_winner(body)))


def _scores(template: str) -> Callable[[int, dict], Answer]:
    """Two scores, the winner's the higher: `template` has {a} and {b}."""

    def answer(nth: int, body: dict) -> Answer:
        w, _ = _winner(body)
        high, low = (8, 6) if "/10" in template else (7.5, 5)
        a, b = (high, low) if w == "A" else (low, high)
        return completion(template.format(a=a, b=b))

    return answer


def _tool_call(w: str, x: str) -> dict[str, Any]:
    arguments = json.dumps({"winner": w, "reason": "softer bleeds"})
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "verdict", "arguments": arguments},
    }
    return {"content": None, "tool_calls": [call]}


def _error(status: int, payload: dict) -> Answer:
    return Answer(status, json.dumps(payload).encode())


def _refuses_the_most_painted(nth: int, body: dict) -> Answer:
    """Refuses any pair holding an image of 40% paint or more; judges the rest truly."""
    if max(_images(body)) >= 0.395:
        return completion("", refusal=REFUSAL)
    return completion(json.dumps({"winner": _winner(body)[0], "reason": "more paint"}))


def _says_json(body: dict) -> bool:
    return "json" in json.dumps(body["messages"]).lower()


def _openai_json_word(nth: int, body: dict) -> Answer:
    """OpenAI: json_object is refused when no message says "json"."""
    kind = (body.get("response_format") or {}).get("type")
    if kind == "json_object" and not _says_json(body):
        return _error(400, {"error": {"message": JSON_WORD, "type": "invalid_request_error",
                                      "param": "messages", "code": None}})  # fmt: skip
    return completion(json.dumps({"winner": _winner(body)[0], "reason": "more paint"}))


def _no_response_format(nth: int, body: dict) -> Answer:
    if body.get("response_format"):
        return _error(400, {"error": {"message": NO_RESPONSE_FORMAT, "param": "response_format"}})
    return completion(json.dumps({"winner": _winner(body)[0], "reason": "more paint"}))


JUDGE_REASON_STYLES: dict[str, Callable[[int, dict], Answer]] = {
    # -- readable ------------------------------------------------------------------------------
    "judge-tool-call": _say(_tool_call),
    "judge-answer-tag": _say(lambda w, x: {"content": f"Washes layer well.\n<answer>{w}</answer>"}),
    "judge-boxed": _say(lambda w, x: {"content": f"The softer one wins: $\\boxed{{{w}}}$"}),
    "judge-boxed-text": _say(lambda w, x: {"content": f"\\boxed{{\\text{{{w}}}}}"}),
    "judge-scores-out-of": _scores("A: {a}/10, B: {b}/10"),
    "judge-scores-image": _scores("Image A: {a}, Image B: {b}"),
    "judge-scores-equals": _scores("Score A = {a}; Score B = {b}"),
    # -- no verdict, for a reason --------------------------------------------------------------
    "judge-refusal-field": lambda nth, body: completion("", refusal=REFUSAL),
    "judge-content-filter": lambda nth, body: completion("", finish="content_filter"),
    "judge-refuses-german": lambda nth, body: completion(
        "Es tut mir leid, ich kann diese Bilder nicht vergleichen."
    ),
    "judge-refuses-chinese": lambda nth, body: completion("抱歉，我无法比较这两幅画。"),
    "judge-reasoning-only": lambda nth, body: completion(
        "", reasoning=f"Image {_winner(body)[0]} has softer bleeds, so"
    ),
    "judge-moderated": lambda nth, body: _error(400, MODERATION),
    "judge-refuses-some": _refuses_the_most_painted,
    "judge-scores-tied": lambda nth, body: completion("A: 7/10, B: 7/10"),
    # -- structured-output modes refused -------------------------------------------------------
    "judge-openai-json-word": _openai_json_word,
    "judge-no-response-format": _no_response_format,
}
