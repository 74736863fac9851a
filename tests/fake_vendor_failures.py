"""Failure shapes for the fake vendor (tests/fake_vendor.py): how real servers fail.

Each is a style (`fake/<style>`) that sees how many requests its model id had (`nth`) and the
request body: OpenRouter's and Zhipu's errors met mid-generation inside a 200 (`finish_reason`
`error` with `choices[0].error`, `network_error` with half a program), Zhipu's `sensitive`
stop, a lone UTF-16 surrogate, DashScope's `400 data_inspection_failed` and OpenRouter's 403
for flagged input, a 402 with no credit, a 429 `insufficient_quota`, OpenAI-style
`x-ratelimit-reset-*` headers, the HF router's loading model with `estimated_time`, a
context-length 400, a 422 for an unknown field, a 413, a 200 carrying an HTML error page,
llama.cpp's 500 for image parts to a text-only model, and a server that refuses
`response_format: json_schema`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_vendor import CRITIC, CUT_DRAFT, FENCED, Answer, completion


def _body(status: int, payload: Any, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, json.dumps(payload).encode(), headers or {})


def _then_good(bad: Callable[[], Answer], times: int = 1, good: str = FENCED):
    """Bad for the first `times` requests of this model id, then a good answer."""
    return lambda nth, body: bad() if nth < times else completion(good)


def _broken_off(finish: str, content: str, error: dict | None) -> Answer:
    answer = completion(content, finish=finish)
    payload = json.loads(answer.body)
    if error is not None:
        payload["choices"][0]["error"] = error
    return Answer(body=json.dumps(payload).encode())


_OR_ERROR = {"code": 502, "message": "Provider returned error", "metadata": {"raw": "upstream"}}
_HALF = f"```js\n{CUT_DRAFT}\n```"
# a lone high surrogate, as a model that split an emoji sends it (valid JSON: "\ud83c")
_SURROGATE = FENCED.replace("noLoop();", "noLoop(); // petals \ud83c")
_INSPECTION = {
    "error": {
        "code": "data_inspection_failed",
        "param": None,
        "message": "Input data may contain inappropriate content.",
        "type": "data_inspection_failed",
    }
}
_FLAGGED = {
    "error": {
        "code": 403,
        "message": "fake/or-flagged requires moderation: Input was flagged",
        "metadata": {"reasons": ["violence"], "flagged_input": "a red flower..."},
    }
}
_NO_CREDIT = {"error": {"code": 402, "message": "Insufficient credits. Add more credits."}}
_QUOTA = {
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "code": "insufficient_quota",
    }
}
_RATE = {"error": {"message": "Rate limit reached for requests", "type": "requests"}}
_CONTEXT = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, you requested"
        " 12000 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
}
VLLM_CONTEXT = 4096  # the served model's whole context (vllm serve --max-model-len 4096)


def _vllm_context(nth: int, body: dict) -> Answer:
    """vLLM's OpenAI server: a request whose messages and max_tokens pass the context is
    refused with its 400, which states the context only in words (param and code say nothing)."""
    prompt = len(json.dumps(body.get("messages", []))) // 4
    wanted = body.get("max_tokens") or body.get("max_completion_tokens") or 16
    if prompt + wanted <= VLLM_CONTEXT:
        return completion(FENCED)
    said = (
        f"This model's maximum context length is {VLLM_CONTEXT} tokens. However, you requested"
        f" {prompt + wanted} tokens ({prompt} in the messages, {wanted} in the completion)."
        " Please reduce the length of the messages or completion."
    )
    return _body(400, {"object": "error", "message": said, "type": "BadRequestError",
                       "param": None, "code": 400})  # fmt: skip


_EXTRA = {
    "detail": [
        {
            "type": "extra_forbidden",
            "loc": ["body", "chat_template_kwargs"],
            "msg": "Extra inputs are not permitted",
        }
    ]
}
_TOO_LARGE = {"error": {"message": "request entity too large: images up to 10 MB"}}
_HTML = b"<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
_CONCAT = {
    "error": {
        "code": 500,
        "message": 'can only concatenate str (not "list") to str',
        "type": "server_error",
    }
}
_NO_SCHEMA = {
    "detail": [
        {
            "type": "literal_error",
            "loc": ["body", "response_format", "type"],
            "msg": "Input should be 'text' or 'json_object'",
            "input": "json_schema",
        }
    ]
}


def _loading(nth: int, body: dict) -> Answer:
    """The HF router while a model loads: 503 and how long it thinks loading takes."""
    if nth < 2:
        payload = {"error": "Model fake/hf-loading is currently loading", "estimated_time": 1.0}
        return _body(503, payload)
    return completion(FENCED)


def _rate_reset(nth: int, body: dict) -> Answer:
    """OpenAI's rate-limit headers: the request budget is spent and resets in 1.2 s."""
    if nth == 0:
        headers = {
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "1s200ms",
            "x-ratelimit-remaining-tokens": "39000",
            "x-ratelimit-reset-tokens": "9m0s",  # not the budget that ran out: ignored
        }
        return _body(429, _RATE, headers)
    return completion(FENCED)


def coverage_verdict(body: dict) -> Answer:
    """A judge's JSON verdict: more paint wins, A when equal."""
    from judge_fakes import request_images

    from renderer.gate import measure_coverage

    first, second = (measure_coverage(png) for png in request_images(body))
    winner = "B" if second > first + 1e-9 else "A"
    return completion(json.dumps({"winner": winner, "reason": "more paint"}))


def _no_json_schema(nth: int, body: dict) -> Answer:
    """llama-cpp-python's server: response_format may be text or json_object, nothing else."""
    kind = (body.get("response_format") or {}).get("type")
    return _body(422, _NO_SCHEMA) if kind == "json_schema" else coverage_verdict(body)


def row_style(name: str) -> Callable[[int, dict], Answer] | None:
    """A row of refpool/core/vendor_spellings.toml served as a style: `row:<id>` answers with
    the row's fixture every time (a fixture that names the request field it answers, `sent`,
    only while the request sends it: an adaptation then succeeds); `row-once:<id>` once, then
    a good answer."""
    from refpool.core.spellings import spellings

    kind, _, row_id = name.partition(":")
    rows = {row.id: row for row in spellings().failures}
    if kind not in ("row", "row-once") or row_id not in rows:
        return None
    fixture = rows[row_id].fixture
    bad = Answer(fixture["status"], fixture["body"].encode(), dict(fixture.get("headers", {})))

    def answer(nth: int, body: dict) -> Answer:
        refused = fixture.get("sent") is None or fixture["sent"] in body
        if refused and (kind == "row" or nth == 0):
            return bad
        return completion(FENCED)

    return answer


def _stream(chunks: list[dict], *, end: str = "data: [DONE]\n\n", opening: str = "") -> Answer:
    """An SSE body (sent to a request that did not ask for a stream, as some proxies do)."""
    text = opening + "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + end
    return Answer(200, text.encode(), {"content-type": "text/event-stream"})


def _deltas(text: str, finish: str | None) -> list[dict]:
    half = len(text) // 2
    pieces = [text[:half], text[half:]]
    chunks = [{"model": "fake", "choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks[-1]["choices"][0]["finish_reason"] = finish
    return chunks


def _said(status: int, message: str, headers: dict[str, str] | None = None) -> Answer:
    return _body(status, {"error": {"message": message}}, headers)


FAILURE_STYLES: dict[str, Callable[[int, dict], Answer]] = {
    # -- the vendor broke off (issue 31): failed, unpaid, retried, never the model's ---------------
    "deepseek-resource": _then_good(
        lambda: completion(_HALF, finish="insufficient_system_resource")
    ),
    "context-window-finish": _then_good(
        lambda: completion(_HALF, finish="model_context_window_exceeded")
    ),
    "stream-cut": _then_good(lambda: _stream(_deltas(FENCED, None), end="")),
    "stream-keepalive": lambda nth, body: _stream(
        _deltas(FENCED, "stop"), opening=": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n"
    ),
    # -- outages repeat identically; waits in every form; zero is no advice -----------------------
    "busy-retry-after-0": _then_good(lambda: _said(503, "busy", {"retry-after": "0"}), times=3),
    "empty-200": _then_good(lambda: Answer(200, b""), times=3),
    "proxy-502": _then_good(lambda: Answer(502, b"<html>502 Bad Gateway</html>"), times=3),
    "daily-cap-6h": lambda nth, body: _said(
        429, "Daily request limit reached", {"retry-after": "21600"}
    ),
    "retry-in-words": _then_good(
        lambda: _said(429, "Rate limit reached. Please try again in 1.2s.")
    ),
    # -- a 200 that is a vendor failure, or a refusal ------------------------------------------
    "or-error-200": _then_good(lambda: _broken_off("error", _HALF, _OR_ERROR)),
    "glm-network-error": _then_good(lambda: _broken_off("network_error", _HALF, None)),
    "glm-network-error-always": lambda nth, body: _broken_off("network_error", _HALF, None),
    "glm-sensitive": lambda nth, body: completion(_HALF, finish="sensitive"),
    "surrogate": lambda nth, body: completion(_SURROGATE),
    # -- errors scoped by meaning ---------------------------------------------------------------
    "or-flagged": _then_good(lambda: _body(403, _FLAGGED)),
    "credit-402": lambda nth, body: _body(402, _NO_CREDIT),
    "quota-429": lambda nth, body: _body(429, _QUOTA),
    "critic-inspection": _then_good(lambda: _body(400, _INSPECTION), good=json.dumps(CRITIC)),
    # -- retry timing ---------------------------------------------------------------------------
    "rate-reset": _rate_reset,
    "hf-loading": _loading,
    # -- permanent failures of a coder ----------------------------------------------------------
    "context-400": lambda nth, body: _body(400, _CONTEXT),
    "vllm-context": _vllm_context,
    "extra-422": lambda nth, body: _body(422, _EXTRA),
    "image-413": lambda nth, body: _body(413, _TOO_LARGE),
    "html-200": lambda nth, body: Answer(200, _HTML, {"content-type": "text/html"}),
    # -- what a real llama.cpp server does ------------------------------------------------------
    "critic-llama-images": lambda nth, body: _body(500, _CONCAT),
    "judge-no-json-schema": _no_json_schema,
    "judge-down": lambda nth, body: _body(500, {"error": {"message": "upstream exploded"}}),
}
