"""What a vendor's failure means, read from what it said: the status, and the body's error
type, code and message. One table, used by every role (coder, critic, judge):

* transient: waiting cures it (a rate limit, a loading model, a 5xx, an unusable 200): retried;
* request: this one request is refused (a moderation or inspection refusal, a context too long,
  a body too large, any other 4xx): not retried, not asked again on a rerun, the model goes on;
* model: the model cannot be used as configured (no credit or quota, a bad key, an unknown
  model, a request field or structured-output mode the server refuses, images sent to a
  text-only model): the model is stopped for the run, with what to change.

A server failure that repeats identically is permanent whatever its status (a text-only
llama.cpp answers image parts with a 500 every time): see `repeated`. Also here: how long a
server asked us to wait, in every form servers say it.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

TRANSIENT, REQUEST, MODEL = "transient", "request", "model"
_4XX = frozenset(range(400, 500))
_ANSWERED = frozenset(range(400, 600))


@dataclass(frozen=True)
class Failure:
    scope: str  # transient | request | model
    kind: str  # e.g. moderation, quota, auth, rate_limit, server, repeated
    hint: str = ""  # what the user can do

    @property
    def permanent(self) -> bool:
        return self.scope != TRANSIENT


@dataclass(frozen=True)
class _Rule:
    kind: str
    scope: str
    statuses: frozenset[int] | None  # None: any status (a 200 carrying an error too)
    said: re.Pattern[str] | None  # searched in the body (type, code, message); None: any body
    hint: str = ""


def _said(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


# First match wins: the order puts meaning before status (a 429 insufficient_quota is no rate
# limit; a 403 for flagged input is no bad key).
RULES: tuple[_Rule, ...] = (
    _Rule(
        "moderation",
        REQUEST,
        None,
        _said(
            r"data_?inspection_?failed|inappropriate content|content[_ ]?(?:policy|filter)"
            r"|moderation|flagged|safety (?:system|filter)|sensitive content|unsafe content"
        ),
        "the vendor's filter refused this one request; the model goes on with the others",
    ),
    _Rule(
        "quota",
        MODEL,
        None,
        _said(
            r"insufficient_quota|exceeded your current quota|quota (?:exceeded|exhausted)"
            r"|insufficient (?:credits?|balance|funds)|credit balance|out of credits|billing"
            r"|arrearage|payment required"
        ),
        "add credit or wait for the quota to reset, then rerun",
    ),
    _Rule("quota", MODEL, frozenset({402}), None, "add credit, then rerun"),
    _Rule("auth", MODEL, frozenset({401}), None, "check the key in the entry's key_env"),
    _Rule(
        "auth",
        MODEL,
        _4XX,
        _said(r"invalid_api_key|invalid api key|incorrect api key|invalid credentials"),
        "check the key in the entry's key_env",
    ),
    _Rule(
        "unknown_model",
        MODEL,
        _4XX,
        _said(
            r"model_not_found|unknown model|no such model"
            r"|model\b.{0,120}\b(?:does not exist|not found|is not (?:available|served))"
        ),
        "check the entry's model id (GET /v1/models lists what the server serves)",
    ),
    _Rule("unknown_model", MODEL, frozenset({404}), None, "check the entry's model id"),
    _Rule(
        "structured_output",
        MODEL,
        _ANSWERED,
        _said(r"response_format|json_schema|guided_json|structured output"),
        'the server refuses this structured-output mode: set "structured_output" to'
        ' "json_object" or "none" for this model in the models file',
    ),
    _Rule(
        "images",
        MODEL,
        _4XX,
        _said(
            r"image.{0,40}(?:not supported|unsupported|not allowed)"
            r"|does not support (?:images?|vision|multimodal)|not a (?:vision|multimodal) model"
        ),
        'this model takes no images: set "accepts_images": false or choose another model',
    ),
    _Rule(
        "request_field",
        MODEL,
        _4XX,
        _said(
            r"extra (?:inputs|fields) (?:are )?not permitted|unknown (?:field|parameter|argument)"
            r"|unrecognized (?:request )?(?:argument|parameter|field)|unexpected keyword"
        ),
        "the server refuses a field of the request: check extra_body in the models file",
    ),
    _Rule(
        "forbidden",
        MODEL,
        frozenset({403}),
        None,
        "the key may not use this model: check the key and the model id",
    ),
    _Rule(
        "loading",
        TRANSIENT,
        None,
        _said(r"currently loading|is loading|estimated_time|warming up|cold start"),
    ),
    _Rule("rate_limit", TRANSIENT, frozenset({429}), None),
    _Rule("rate_limit", TRANSIENT, None, _said(r"rate[_ ]?limit|too many requests")),
    _Rule(
        "context_length",
        REQUEST,
        _4XX,
        _said(
            r"context_length_exceeded|context (?:length|window)|maximum context"
            r"|too many (?:input )?tokens|prompt is too long"
        ),
        "the request is longer than the model's context: lower max_tokens or use a longer context",
    ),
    _Rule(
        "too_large", REQUEST, frozenset({413}), None, "the request body is over the server's limit"
    ),
    _Rule("busy", TRANSIENT, frozenset({408, 409, 425}), None),
    _Rule("bad_request", REQUEST, _4XX, None, "the server refused this request"),
)
SERVER = Failure(TRANSIENT, "server")  # a 5xx, an unusable 200, a timeout, no connection
# A reply the vendor broke off with an error (finish_reason "error"/"network_error"): retried,
# never kept as the model's answer, whether or not it repeats.
INTERRUPTED = Failure(TRANSIENT, "interrupted")
REPEATED = Failure(
    REQUEST,
    "repeated",
    "the server gave the same failure twice: it is permanent (rerun with --retry-failed to ask"
    " again)",
)


def classify_failure(status: int | None, said: str | None) -> Failure:
    """The meaning of a failed call: `status` (None: no HTTP answer) and what the server said."""
    text = said or ""
    for rule in RULES:
        if rule.statuses is not None and (status is None or status not in rule.statuses):
            continue
        if rule.said is not None and not rule.said.search(text):
            continue
        return Failure(rule.scope, rule.kind, rule.hint)
    return SERVER


def repeated(first: Failure, status: int | None, signature: str, earlier: str | None) -> Failure:
    """`first`, or REPEATED when a server's answer came back identically (`signature` equals the
    `earlier` one). Rate limits and loading models repeat by nature and stay transient, and so
    does no answer at all (`status` None: a timeout or a dropped connection is load, not a
    verdict on the request)."""
    answered = status is not None
    if first.kind == "server" and answered and earlier is not None and signature == earlier:
        return REPEATED
    return first


def signature(status: int | None, error: str | None) -> str:
    """What makes two failures the same: the status and the text, ids and numbers aside."""
    text = re.sub(r"[0-9a-f]{8,}|\d+", "#", (error or "").lower())
    return f"{status}:{text[:400]}"


# -- how long a server asked us to wait ---------------------------------------------------------
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def duration_s(value: str | None) -> float | None:
    """Seconds in a duration such as `1m30s`, `6s`, `250ms` or a bare number of seconds."""
    if value is None or not value.strip():
        return None
    value = value.strip().lower()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = _DURATION.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value.replace(" ", ""):
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if seconds == seconds else None  # NaN: ignore


def _reset_s(value: str | None, now: float) -> float | None:
    """x-ratelimit-reset-*: a duration (OpenAI: `1m30s`), or an epoch time in s or ms."""
    seconds = duration_s(value)
    if seconds is not None and seconds > 1e12:  # epoch milliseconds (OpenRouter)
        return max(0.0, seconds / 1000 - now)
    if seconds is not None and seconds > 1e9:  # epoch seconds
        return max(0.0, seconds - now)
    return seconds


def server_wait_s(
    headers: Mapping[str, str], body: str | None, now: float | None = None
) -> float | None:
    """The longest wait the server asked for (None if it said nothing): Retry-After (seconds
    or a date), retry-after-ms, x-ratelimit-reset-requests/-tokens for an exhausted budget,
    or the body's `estimated_time` (the HF router's loading model)."""
    now = time.time() if now is None else now
    get = {k.lower(): v for k, v in headers.items()}.get
    waits = [retry_after_s(get("retry-after"), now)]
    ms = duration_s(get("retry-after-ms"))
    waits.append(ms / 1000 if ms is not None else None)
    for budget in ("requests", "tokens"):
        remaining = get(f"x-ratelimit-remaining-{budget}")
        if remaining is not None and remaining.strip() not in ("0", "0.0"):
            continue  # this budget is not what ran out
        waits.append(_reset_s(get(f"x-ratelimit-reset-{budget}"), now))
    waits.append(_reset_s(get("x-ratelimit-reset"), now))
    waits.append(_estimated_time(body))
    found = [w for w in waits if w is not None]
    return max(found) if found else None


def _estimated_time(body: str | None) -> float | None:
    if not body or "estimated_time" not in body:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    for where in (data, data.get("error") if isinstance(data, dict) else None):
        if isinstance(where, dict) and isinstance(where.get("estimated_time"), int | float):
            return max(0.0, float(where["estimated_time"]))
    return None
