"""Provenance shapes for the fake vendor (tests/fake_vendor.py), issue 31.

A router that serves another model than the one asked for (its body's `model` says so, in a
plain body or in every chunk of a stream), one that only spells the same model otherwise
(case, organisation, a `:provider` suffix), an OpenAI-style 401 that echoes a masked,
unprefixed key, and critics whose JSON max_tokens cut mid-way (after their first sentence of
advice, or before any advice). A server names the model it served: the one asked for, unless
a style says otherwise (`served_as_asked`), as vLLM and the routers do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from fake_vendor import CRITIC, FENCED, Answer, completion, error

FALLBACK = "z-ai/glm-4.5"  # what the router served instead
UNPREFIXED_KEY = "a1b2c3d4e5f6g7h8i9j0k1l2m3n4"  # a DeepSeek/Moonshot/vLLM-style key
_MASKED = f"{UNPREFIXED_KEY[:8]}****{UNPREFIXED_KEY[-4:]}"
_SCORES = json.dumps(CRITIC["scores"])
# the critic's JSON as max_tokens leaves it: one sentence of advice, then the cut
CUT_IN_ADVICE = (
    f'{{"scores": {_SCORES}, "advice": "Enlarge the petals by a third. Then deepen the'
    " centre with #8e1b2c and"
)
CUT_BEFORE_ADVICE = f'```json\n{{"scores": {_SCORES}, "adv'


def _stream(model: str) -> Answer:
    """A 200 whose body is server-sent events (a stream sent to a plain request)."""
    pieces = [FENCED[: len(FENCED) // 2], FENCED[len(FENCED) // 2 :]]
    chunks = [{"model": model, "choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks[-1]["choices"][0]["finish_reason"] = "stop"
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
    return Answer(body="".join(lines).encode())


PROVENANCE_STYLES: dict[str, Callable[[int, dict], Answer]] = {
    "served-fallback": lambda nth, body: completion(FENCED, model=FALLBACK),
    "served-stream": lambda nth, body: _stream(FALLBACK),
    "served-spelling": lambda nth, body: completion(
        FENCED, model=f"{body['model'].upper()}:nebius"
    ),
    "key-echo-unprefixed": lambda nth, body: error(
        401,
        f"Incorrect API key provided: {_MASKED}. You can find your API key at"
        " https://platform.example.com/api-keys.",
    ),
    "critic-cut-advice": lambda nth, body: completion(CUT_IN_ADVICE, finish="length"),
    "critic-cut-scores": lambda nth, body: completion(CUT_BEFORE_ADVICE, finish="length"),
    "critic-served-fallback": lambda nth, body: completion(json.dumps(CRITIC), model=FALLBACK),
}


def served_as_asked(request: dict[str, Any], answer: Answer) -> Answer:
    """The answer naming the model asked for where a style left the placeholder "fake" (its
    other bytes as the style made them)."""
    placeholder = b'"model": "fake",'
    if placeholder not in answer.body:
        return answer
    asked = json.dumps(str(request.get("model", "fake"))).encode()
    return replace(answer, body=answer.body.replace(placeholder, b'"model": ' + asked + b",", 1))
