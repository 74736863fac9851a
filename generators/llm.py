"""One recorded, retried chat call to an OpenAI-compatible endpoint.

Models are declared as data (generators/modelcfg.py). Every attempt is recorded with its
outcome, and whatever a server sends (a cut-off body, an error carried by a 200, a slow drip of
bytes) ends as one recorded call, never as an exception out of the run. The `openai` package
is imported lazily; keys are never logged or stored.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import time
from importlib import resources
from string import Template
from typing import Any

from generators import vendor
from generators.modelcfg import MODELS_ENV, ModelConfig, ModelsFileError, load_models
from generators.recorded import (
    after_record,
    explain,
    paid_reply,
    permanent_refusal,
    record,
    recorded_reply,
    refused_before,
)
from generators.replies import REFUSAL, ChatResult, classify, parse_body
from generators.vendor import retry_after_s
from refpool.core import finish
from refpool.core.errors import RefpoolError
from refpool.core.store import Store, model_calls, sha256_bytes
from refpool.core.text import repair_text

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
    "explain",
    "permanent_refusal",
    "recorded_reply",
    "retry_after_s",
]


def prompt(name: str, **values: Any) -> str:
    """A prompt from generators/prompts/, with $placeholders filled in."""
    text = resources.files("generators").joinpath("prompts", name).read_text("utf-8")
    return Template(text).safe_substitute(**values) if values else text


def image_part(data: bytes, mime: str) -> dict:
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


# What each role asks for when its models-file entry leaves `structured_output` out.
STRUCTURED_DEFAULT = {"coder": "none", "critic": "none", "judge": "json_schema"}


def response_format(
    cfg: ModelConfig, role: str, schema: dict[str, Any] | None = None, name: str = "reply"
) -> dict[str, Any] | None:
    """The request's `response_format` (as `chat`'s `extra`), from the entry's
    structured_output: none, json_object, or json_schema (json_object without a schema)."""
    mode = cfg.structured_output or STRUCTURED_DEFAULT.get(role, "none")
    if mode == "none":
        return None
    if mode == "json_schema" and schema is not None:
        spec = {"name": name, "schema": schema, "strict": True}
        return {"response_format": {"type": "json_schema", "json_schema": spec}}
    return {"response_format": {"type": "json_object"}}


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

    def __init__(self, max_concurrency: int | None = None, retry_failed: bool = False) -> None:
        self.max_concurrency = max_concurrency  # a run's --concurrency caps every endpoint
        self.retry_failed = retry_failed  # ask again what an earlier run saw refused for good
        self._refusals: dict[tuple[str, str, str], set[str | None]] = {}
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

    def refused(
        self, cfg: ModelConfig, purpose: str, failure: Any, mark: str | None, job_key: str | None
    ) -> bool:
        """Note a request refused for good; True once two different requests of this model
        were refused by the same repeated server failure (the request's shape is refused, not
        its content: a text-only server's 500 for image parts), so the model is stopped."""
        if failure.kind != vendor.REPEATED.kind or mark is None:
            return False
        seen = self._refusals.setdefault((cfg.name, purpose, mark), set())
        seen.add(job_key)
        return len(seen) >= 2

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
RETRY_AFTER_MARGIN_S = 0.05  # so a timer's resolution never wakes us before the server said
MAX_GUIDED_ATTEMPTS = 32  # retries a server times itself stop here even within the budget
SNIPPET = 500  # characters of a failed call's body kept in its error


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
    """One chat completion; every attempt is recorded first, then read by what it means
    (generators/vendor.py): a transient failure is retried (`max_attempts` with backoff, or for
    as long as the server asks within the entry's `retry_budget_s`), a permanent one is not,
    and one that stops the model disables it for the run. `cfg.timeout_s` is the total
    deadline of each attempt, however the bytes drip. A request refused for good in an earlier
    run is not sent again (unless `endpoints.retry_failed`), nor is a disabled model called."""
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
    if job_key is not None and not endpoints.retry_failed:
        refused = refused_before(store, job_key, purpose, params)
        if refused is not None:
            return refused
    stored_messages = redact_images(messages)
    result = ChatResult(outcome="http_error")
    waited, earlier, attempt = 0.0, None, 0
    while True:
        attempt += 1
        started = time.monotonic()
        wait: float | None = None
        said = ""  # the server's whole answer to a failed call, for its meaning
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
            said = _by_finish(result, body) if result.outcome == "ok" else result.error or ""
        except (TimeoutError, openai.APITimeoutError):
            result = ChatResult(outcome="timeout", error=f"no reply within {cfg.timeout_s:g} s")
        except openai.APIStatusError as exc:
            said = _response_text(exc)
            snippet = said[:SNIPPET] + ("…" if len(said) > SNIPPET else "")
            status = exc.status_code
            result = ChatResult("http_error", error=f"HTTP {status}: {snippet}", http_status=status)
            wait = vendor.server_wait_s(exc.response.headers, said)
        except openai.APIConnectionError as exc:
            result = ChatResult("http_error", error=f"connection failed: {type(exc).__name__}")
        except openai.APIError as exc:  # anything else the client raises: one failed call
            result = ChatResult("http_error", error=f"{type(exc).__name__}: {exc}")
        except (OSError, ValueError, LookupError) as exc:  # a transport the client left raw
            result = ChatResult("http_error", error=f"{type(exc).__name__}: {exc}")
        except RuntimeError as exc:  # missing key: not retryable, not a paid call
            return ChatResult(outcome="http_error", error=str(exc), permanent=True)
        result.latency_ms = round((time.monotonic() - started) * 1000, 1)
        failure, give_up = None, False
        if result.outcome != "ok":
            failure = _meaning(result, said)
            mark = vendor.signature(result.http_status, model_calls.scrub_secrets(result.error))
            failure = vendor.repeated(failure, result.http_status, mark, earlier)
            earlier = mark
            result.permanent = failure.permanent
            if wait is not None and waited + wait > cfg.retry_budget_s and not failure.permanent:
                give_up = True  # transient still: a rerun asks again
                result.error = (
                    f"{result.error} (the server asked to wait {wait:g} s more, past the retry"
                    f" budget of {cfg.retry_budget_s:g} s: given up; raise retry_budget_s in the"
                    " models file to wait longer)"
                )
        result.call_id = record(store, cfg, purpose, stored_messages, params, result, job_key)
        after_record(result)
        if failure is None:
            return result
        stops_model = failure.scope == vendor.MODEL
        if stops_model or endpoints.refused(cfg, purpose, failure, earlier, job_key):
            endpoints.disable(cfg, disabled_message(purpose, cfg, result.error, failure))
        if failure.permanent or give_up:
            return result
        if wait is not None:
            if attempt >= MAX_GUIDED_ATTEMPTS:
                return result
            # never earlier than the server said; a little later, so retries do not bunch up
            delay = wait * random.uniform(1.0, 1.1) + RETRY_AFTER_MARGIN_S
            waited += delay
        else:
            if attempt >= max_attempts:
                return result
            delay = min(60.0, RETRY_BASE_S * 2 ** (attempt - 1)) * random.uniform(0.8, 1.2)
        await asyncio.sleep(delay)


def _meaning(result: ChatResult, said: str) -> vendor.Failure:
    if result.outcome == "timeout":
        return vendor.SERVER
    if (
        result.finish_reason is not None
        and finish.finish_meaning(result.finish_reason) == finish.VENDOR_ERROR
    ):
        return vendor.INTERRUPTED
    return vendor.classify_failure(result.http_status, said or result.error)


def _by_finish(result: ChatResult, body: bytes) -> str:
    """A 200 read by its finish reason and any per-choice error: a reply the vendor broke off
    (`error`, `network_error`, or `choices[0].error`) is a failed call, never the model's
    answer. Returns the error's text ("" for a usable reply)."""
    choice_error = _choice_error(body) if b'"error"' in body else None
    if choice_error is None and finish.finish_meaning(result.finish_reason) != finish.VENDOR_ERROR:
        return ""
    said = choice_error or "the vendor broke the reply off"
    result.outcome = "http_error"
    result.error = f"HTTP 200 finish_reason {result.finish_reason!r}: {said[:SNIPPET]}"
    result.finish_reason = result.finish_reason or "error"
    return said


def _choice_error(body: bytes) -> str | None:
    try:
        data = json.loads(body)
        err = data["choices"][0].get("error")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None
    if not err:
        return None
    if isinstance(err, dict):
        return json.dumps(err, ensure_ascii=False)
    return str(err)


def _response_text(exc: Any) -> str:
    try:
        return repair_text(exc.response.text.strip())
    except Exception:  # noqa: BLE001 - the status alone still says what happened
        try:
            return json.dumps(exc.body, ensure_ascii=False) if exc.body is not None else ""
        except (TypeError, ValueError):
            return ""


def _disabled(endpoints: Endpoints, cfg: ModelConfig) -> ChatResult:
    return ChatResult("http_error", error=endpoints.disabled[cfg.name], permanent=True)


def disabled_message(purpose: str, cfg: ModelConfig, error: str | None, failure: Any) -> str:
    """The one message a run prints for a model it stopped."""
    hint = f" ({failure.hint})" if getattr(failure, "hint", "") else ""
    return (
        f"{purpose} {cfg.name} ({cfg.model} at {cfg.base_url}) was disabled for this run:"
        f" {error or 'refused the request'}{hint}. Fix the models file or choose another model;"
        " a rerun asks it again only with --retry-failed."
    )
