"""One recorded, retried chat call to an OpenAI-compatible endpoint.

Models are declared as data (generators/modelcfg.py). Every attempt is recorded with its
outcome, and whatever a server sends (a cut-off body, an error carried by a 200, a slow drip of
bytes) ends as one recorded call, never as an exception out of the run. The `openai` package
is imported lazily; keys are never logged or stored.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import json
import os
import random
import time
from importlib import resources
from string import Template
from typing import Any

from generators.modelcfg import MODELS_ENV, ModelConfig, ModelsFileError, load_models
from generators.replies import REFUSAL, ChatResult, classify, parse_body
from refpool.core.contracts import ModelCall
from refpool.core.errors import RefpoolError
from refpool.core.store import Store, model_calls, sha256_bytes

__all__ = [
    "MODELS_ENV",
    "REFUSAL",
    "ChatResult",
    "Endpoints",
    "ModelConfig",
    "ModelsFileError",
    "chat",
    "classify",
    "load_models",
    "paid_reply",
    "prompt",
    "recorded_reply",
]


def prompt(name: str, **values: Any) -> str:
    """A prompt from generators/prompts/, with $placeholders filled in."""
    text = resources.files("generators").joinpath("prompts", name).read_text("utf-8")
    return Template(text).safe_substitute(**values) if values else text


def image_part(data: bytes, mime: str) -> dict:
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def redact_images(messages: list[dict]) -> list[dict]:
    """Messages as stored: every inline image replaced by its sha256 (PNGs live in the store)."""
    out = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                url = (part.get("image_url") or {}).get("url", "")
                if part.get("type") == "image_url" and url.startswith("data:"):
                    raw = base64.b64decode(url.split(",", 1)[1])
                    parts.append(
                        {"type": "image_url", "image_url": {"url": f"sha256:{sha256_bytes(raw)}"}}
                    )
                else:
                    parts.append(part)
            msg = {**msg, "content": parts}
        out.append(msg)
    return out


class Endpoints:
    """Per-endpoint concurrency limits, lazily built async clients, and models disabled for
    the run.

    The limit belongs to the endpoint (its base_url): every model on it shares one semaphore,
    sized by the lowest `concurrency` among the models registered for the run (and the run's
    --concurrency).
    """

    def __init__(self, max_concurrency: int | None = None) -> None:
        self.max_concurrency = max_concurrency  # a run's --concurrency caps every endpoint
        self._limits: dict[str, int] = {}
        self._sems: dict[str, asyncio.Semaphore] = {}
        self._clients: dict[tuple[str, str], Any] = {}
        self.disabled: dict[str, str] = {}  # model name -> why (a permanent error)

    def register(self, cfg: ModelConfig) -> None:
        """Declare a model before the run starts, so its endpoint's limit is the minimum."""
        limit = min(cfg.concurrency, self.max_concurrency or cfg.concurrency)
        self._limits[cfg.base_url] = min(limit, self._limits.get(cfg.base_url, limit))

    def limit(self, cfg: ModelConfig) -> int:
        if cfg.base_url not in self._limits:
            self.register(cfg)
        return max(1, self._limits[cfg.base_url])

    def semaphore(self, cfg: ModelConfig) -> asyncio.Semaphore:
        if cfg.base_url not in self._sems:
            self._sems[cfg.base_url] = asyncio.Semaphore(self.limit(cfg))
        return self._sems[cfg.base_url]

    def disable(self, cfg: ModelConfig, why: str) -> None:
        self.disabled.setdefault(cfg.name, why)

    def client(self, cfg: ModelConfig) -> Any:
        try:
            from openai import AsyncOpenAI
        except ImportError as exc:  # pragma: no cover - openai is a pinned dependency
            raise RefpoolError(
                "model endpoints need the openai package: pip install openai"
            ) from exc
        key = cfg.api_key()
        slot = (cfg.base_url, cfg.key_env or "")
        if slot not in self._clients:
            # our own retry loop records every attempt, so the client must not retry silently
            self._clients[slot] = AsyncOpenAI(api_key=key, base_url=cfg.base_url, max_retries=0)
        return self._clients[slot]

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()


RETRY_BASE_S = float(os.environ.get("REFPOOL_RETRY_BASE_S", "2.0"))
MAX_RETRY_AFTER_S = 300.0  # a server asking for a longer wait than this is given up on
RETRY_AFTER_MARGIN_S = 0.05  # so a timer's resolution never wakes us before the server said
# 4xx statuses that waiting can cure; any other 4xx is permanent.
TRANSIENT_4XX = frozenset({408, 409, 425, 429})


async def chat(
    store: Store,
    endpoints: Endpoints,
    cfg: ModelConfig,
    messages: list[dict],
    *,
    purpose: str,
    temperature: float,
    max_attempts: int = 4,
    extra: dict | None = None,
    job_key: str | None = None,
) -> ChatResult:
    """One chat completion with retries on 429/5xx/timeouts/unusable bodies; every attempt is
    recorded. `cfg.timeout_s` is the total deadline of each attempt, however the bytes drip.
    A model disabled for the run (see `Endpoints.disable`) is not called at all."""
    import openai

    params: dict[str, Any] = {
        "temperature": temperature,
        "max_tokens": cfg.max_tokens,
        "timeout_s": cfg.timeout_s,
    }
    params |= extra or {}
    if cfg.extra_body:
        params["extra_body"] = cfg.extra_body
    if cfg.headers:
        params["headers"] = sorted(cfg.headers)  # names only: values may be credentials
    stored_messages = redact_images(messages)
    result = ChatResult(outcome="http_error")
    for attempt in range(1, max_attempts + 1):
        started = time.monotonic()
        retry_after = None
        try:
            async with endpoints.semaphore(cfg):
                if cfg.name in endpoints.disabled:  # disabled while this call waited its turn
                    return _disabled(endpoints, cfg)
                client = endpoints.client(cfg)
                started = time.monotonic()
                async with asyncio.timeout(cfg.timeout_s):
                    raw = await client.chat.completions.with_raw_response.create(
                        model=cfg.model,
                        messages=messages,
                        temperature=temperature,
                        max_tokens=cfg.max_tokens,
                        timeout=cfg.timeout_s,
                        extra_body=cfg.extra_body or None,
                        extra_headers=cfg.headers or None,
                        **(extra or {}),
                    )
                    body = raw.content
            result = parse_body(body, raw.status_code)
        except (TimeoutError, openai.APITimeoutError):
            result = ChatResult(outcome="timeout", error=f"no reply within {cfg.timeout_s:g} s")
        except openai.APIStatusError as exc:
            status = exc.status_code
            permanent = 400 <= status < 500 and status not in TRANSIENT_4XX
            result = ChatResult(
                "http_error", error=_status_error(exc), http_status=status, permanent=permanent
            )
            headers = exc.response.headers
            retry_after = retry_after_s(headers.get("retry-after"))
            if retry_after is None and headers.get("retry-after-ms"):
                retry_after = (retry_after_s(headers.get("retry-after-ms")) or 0) / 1000
        except openai.APIConnectionError as exc:
            result = ChatResult("http_error", error=f"connection failed: {type(exc).__name__}")
        except openai.APIError as exc:  # anything else the client raises: one failed call
            result = ChatResult("http_error", error=f"{type(exc).__name__}: {exc}")
        except (OSError, ValueError, LookupError) as exc:  # a transport the client left raw
            result = ChatResult("http_error", error=f"{type(exc).__name__}: {exc}")
        except RuntimeError as exc:  # missing key: not retryable, not a paid call
            return ChatResult(outcome="http_error", error=str(exc), permanent=True)
        result.latency_ms = round((time.monotonic() - started) * 1000, 1)
        result.call_id = _record(store, cfg, purpose, stored_messages, params, result, job_key)
        if result.outcome == "ok" or result.permanent or attempt >= max_attempts:
            return result
        if retry_after is not None:
            if retry_after > MAX_RETRY_AFTER_S:
                result.error = f"{result.error} (asked to wait {retry_after:g} s: given up)"
                return result
            # never earlier than the server said; a little later, so retries do not bunch up
            delay = retry_after * random.uniform(1.0, 1.1) + RETRY_AFTER_MARGIN_S
        else:
            delay = min(60.0, RETRY_BASE_S * 2 ** (attempt - 1)) * random.uniform(0.8, 1.2)
        await asyncio.sleep(delay)
    return result


def _disabled(endpoints: Endpoints, cfg: ModelConfig) -> ChatResult:
    return ChatResult("http_error", error=endpoints.disabled[cfg.name], permanent=True)


def _status_error(exc: Any) -> str:
    body = ""
    try:
        body = json.dumps(exc.body)[:300] if exc.body is not None else ""
    except (TypeError, ValueError):
        body = ""
    if not body:
        try:
            body = exc.response.text[:300]
        except Exception:  # noqa: BLE001 - the status alone still says what happened
            body = ""
    return f"HTTP {exc.status_code}: {body}".strip()


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


def _record(
    store: Store,
    cfg: ModelConfig,
    purpose: str,
    messages: list[dict],
    params: dict[str, Any],
    result: ChatResult,
    job_key: str | None,
) -> int:
    result.error = model_calls.scrub_secrets(result.error)  # also what the user is shown
    call = ModelCall(
        model=cfg.model,
        base_url=cfg.base_url,
        purpose=purpose,
        messages=messages,
        params=params,
        outcome=result.outcome,
        response=result.content or None,
        reasoning=result.reasoning or None,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        latency_ms=result.latency_ms,
        cost_usd=cfg.cost(result.prompt_tokens, result.completion_tokens),
        error=result.error,
        job_key=job_key,
        finish_reason=result.finish_reason,
        refusal=result.refusal,
        http_status=result.http_status,
    )
    return model_calls.save(store, call)


# -- replies already paid for -------------------------------------------------------------------
def paid_reply(store: Store, key: str, purpose: str = "coder") -> tuple[int, ChatResult] | None:
    """(call id, reply) of the latest reply already paid for under this job key, as `chat`
    returned it, or None. A run killed after the model answered reuses it instead of paying twice.
    """
    call = model_calls.latest_paid(store, key, purpose)
    return (call.id, _stored_result(call)) if call is not None and call.id is not None else None


def recorded_reply(store: Store, call_id: int) -> ChatResult | None:
    """A recorded call read back as `chat` returned it (None if there is no such call)."""
    call = model_calls.get(store, call_id)
    return _stored_result(call) if call is not None else None


def _stored_result(call: ModelCall) -> ChatResult:
    return ChatResult(
        outcome=call.outcome,
        content=call.response or "",
        reasoning=call.reasoning or "",
        finish_reason=call.finish_reason,
        refusal=call.refusal,
        call_id=call.id,
        error=call.error,
        http_status=call.http_status,
    )
