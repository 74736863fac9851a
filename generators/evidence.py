"""What a failed reply says, read from its structure: the evidence generators/vendor.py weighs.

Servers nest the same facts many ways: `{"error": {...}}`, a list of such objects (Gemini's
OpenAI layer), a validation error's `detail` list (FastAPI servers: vLLM, SGLang), a provider's
error as a JSON string inside `metadata.raw` (OpenRouter), a 200 carrying `base_resp`
(MiniMax), Google's `details` with `@type`. One walk over the whole body collects:

* tokens: the values of type / code / status / reason / @type / quota ids, normalised to
  lower_snake; a number becomes `key:value` (Zhipu's "code:1113" is not MiniMax's
  "status_code:1008");
* params: the request fields the error names (`param`, `loc`, `fieldViolations[].field`);
* texts: every message the server wrote (what phrases and stated waits are read from);
* waits: delays stated in fields (RetryInfo's retryDelay, estimated_time, retry_after);
* context_sizes: the model's whole context as a field states it (llama.cpp's `n_ctx`,
  `max_model_len`); the words that state it are rows of the spellings table.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_CODE_KEYS = frozenset(
    {"type", "code", "status", "reason", "error_type", "errorcode", "error_code", "@type",
     "quotaid", "quota_id", "quotametric", "status_code", "err_code"}
)  # fmt: skip
_PARAM_KEYS = frozenset({"param", "loc", "field", "parameter"})
_TEXT_KEYS = frozenset(
    {"message", "msg", "detail", "error", "error_msg", "errmsg", "raw", "description",
     "status_msg", "error_description", "details"}
)  # fmt: skip
_WAIT_KEYS = frozenset({"retrydelay", "retry_delay", "retry_after", "retryafter", "estimated_time"})
_CONTEXT_KEYS = frozenset(
    {"n_ctx", "max_model_len", "max_context_length", "context_length", "context_window",
     "context_size", "max_context_tokens"}
)  # fmt: skip
_NOT_FIELDS = frozenset({"body", "query", "path", "header", "headers"})
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_DELAY = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$", re.I)
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, None: 1.0}


def normalise(value: Any) -> str:
    """lower_snake: `Throttling.RateQuota` -> `throttling_ratequota`."""
    text = re.sub(r"[^0-9a-z]+", "_", str(value).lower()).strip("_")
    return text.rsplit("google_rpc_", 1)[-1]  # type.googleapis.com/google.rpc.RetryInfo


@dataclass
class Evidence:
    tokens: set[str] = field(default_factory=set)
    params: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)
    context_sizes: list[int] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


def read_evidence(body: str | bytes | None) -> Evidence:
    """Everything structured in a failed reply's body (its raw text is kept as a text too)."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    found = Evidence()
    body = (body or "").strip()
    if not body:
        return found
    try:
        data = json.loads(body)
    except ValueError:
        found.texts.append(body)  # an HTML page, a plain-text error: only words to go on
        return found
    _walk(data, found, depth=0)
    if not found.texts:
        found.texts.append(body)
    return found


def _walk(value: Any, found: Evidence, depth: int) -> None:
    if depth > 12:  # a pathological body: what was read so far is enough
        return
    if isinstance(value, list):
        for item in value:
            _walk(item, found, depth + 1)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        name = str(key).lower()
        if name == "metadata" and isinstance(item, dict):
            found.tokens.update(normalise(k) for k in item)  # OpenRouter: flagged_input ...
        if name in _CODE_KEYS and isinstance(item, str | int) and not isinstance(item, bool):
            _token(found, name, item)
        if name in _PARAM_KEYS:
            _params(found, item)
        if name in _WAIT_KEYS:
            _wait(found, item)
        if name in _CONTEXT_KEYS and isinstance(item, int) and not isinstance(item, bool):
            found.context_sizes.append(item)
        if isinstance(item, str) and name in _TEXT_KEYS:
            _text(found, item, depth)
        elif isinstance(item, dict | list):
            _walk(item, found, depth + 1)


def _token(found: Evidence, key: str, value: str | int) -> None:
    text = str(value).strip()
    if not text:
        return
    if _NUMBER.match(text):
        found.tokens.add(f"{normalise(key)}:{text}")
    else:
        found.tokens.add(normalise(text))


def _params(found: Evidence, value: Any) -> None:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, str) and item.strip() and item.lower() not in _NOT_FIELDS:
            found.params.add(item.strip().lower())


def _text(found: Evidence, text: str, depth: int) -> None:
    stripped = text.strip()
    if stripped[:1] in "{[":  # a provider's own error, as JSON inside a string
        try:
            inner = json.loads(stripped)
        except ValueError:
            pass
        else:
            _walk(inner, found, depth + 1)
            return
    if stripped:
        found.texts.append(stripped)


def _wait(found: Evidence, value: Any) -> None:
    seconds: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str):
        match = _DELAY.match(value.strip())
        if match:
            seconds = float(match.group(1)) * _UNIT_S[match.group(2) and match.group(2).lower()]
    elif isinstance(value, dict):  # protobuf Duration as JSON: {"seconds": 9, "nanos": ...}
        whole, nanos = value.get("seconds", 0), value.get("nanos", 0)
        if isinstance(whole, int | float | str) and isinstance(nanos, int | float):
            try:
                seconds = float(whole) + float(nanos) / 1e9
            except ValueError:
                seconds = None
    if seconds is not None and seconds > 0:  # 0 is no advice
        found.waits.append(seconds)
