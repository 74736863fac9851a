"""One recorded, retried chat call to an OpenAI-compatible endpoint.

Models are declared as data (generators/modelcfg.py). Every attempt is recorded with its
outcome, and whatever a server sends (a cut-off body, an error carried by a 200, a slow drip of
bytes) ends as one recorded call, never as an exception out of the run. The `openai` package
is imported lazily; keys are never logged or stored.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from importlib import resources
from string import Template
from typing import Any

from generators import vendor
from generators.attempts import (
    SNIPPET,
    disabled_message,
    has_images,
    next_step,
    recorded_params,
    request_fields,
    response_text,
    vendor_cut,
)
from generators.endpoints import Endpoints
from generators.modelcfg import MODELS_ENV, ModelConfig, ModelsFileError, load_models
from generators.recorded import (
    after_record,
    explain,
    paid_reply,
    permanent_refusal,
    record,
    record_interrupted,
    recorded_reply,
    refused_before,
)
from generators.replies import ChatResult, classify, is_refusal, parse_body
from generators.vendor import retry_after_s
from refpool.core.store import Store, sha256_bytes

__all__ = [
    "MODELS_ENV",
    "is_refusal",
    "ChatResult",
    "Endpoints",
    "ModelConfig",
    "ModelsFileError",
    "chat",
    "classify",
    "disabled_message",
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


RETRY_BASE_S = float(os.environ.get("REFPOOL_RETRY_BASE_S", "2.0"))


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
    """One chat completion. Every attempt is recorded first, with what its failure meant and
    who caused it (generators/vendor.py), then the next step is decided from that meaning
    (generators/attempts.py): the vendor's failures are retried with backoff, or after the
    wait the server states, within the entry's `retry_budget_s`; a refused request is not
    retried; a refused configuration or account stops the model for the run, unless a safe
    adaptation exists. `cfg.timeout_s` is the total deadline of each attempt, however the bytes
    drip. A request refused for good in an earlier run is not sent again (unless
    `endpoints.retry_failed`), nor is a stopped model called."""
    import openai

    if job_key is not None and not endpoints.retry_failed:
        params = recorded_params(cfg, temperature, extra, endpoints.adapted(cfg))
        refused = refused_before(store, job_key, purpose, params)
        if refused is not None:
            before = vendor.from_label(refused.failure)
            if before is not None and before.stops_model:  # the same entry: still refused
                why = disabled_message(purpose, cfg, refused.error, before, extra)
                endpoints.disable(cfg, why)
            return refused
    stored_messages = redact_images(messages)
    with_images = has_images(messages)
    waited, attempt = 0.0, 0
    while True:
        attempt += 1
        adapted = endpoints.adapted(cfg)
        started = time.monotonic()
        wait: float | None = None
        failure: vendor.Failure | None = None
        sent = False  # a request stopped before it was sent was never in flight
        try:
            async with endpoints.semaphore(cfg):
                if cfg.name in endpoints.disabled:  # stopped while this call waited its turn
                    return ChatResult(
                        "http_error", error=endpoints.disabled[cfg.name], permanent=True
                    )
                client = endpoints.client(cfg)
                started = time.monotonic()
                sent = True
                async with asyncio.timeout(cfg.timeout_s):
                    raw = await client.chat.completions.with_raw_response.create(
                        model=cfg.model,
                        messages=messages,
                        timeout=cfg.timeout_s,
                        extra_body=cfg.extra_body or None,
                        extra_headers=cfg.headers or None,
                        **request_fields(cfg, temperature, extra, adapted),
                    )
                    body = raw.content
            result = parse_body(body, raw.status_code)
            if result.outcome == "ok":
                failure = vendor_cut(result, body)
            else:  # a 200 that carries an error, no choices, or no JSON at all
                failure = vendor.read_failure(
                    raw.status_code, body, has_images=with_images, max_tokens=cfg.max_tokens
                )
            if failure is not None:
                wait = vendor.server_wait_s(raw.headers, body)
        except (TimeoutError, openai.APITimeoutError):
            result = ChatResult(outcome="timeout", error=f"no reply within {cfg.timeout_s:g} s")
            failure = vendor.NO_ANSWER
        except openai.APIStatusError as exc:
            said = response_text(exc)
            snippet = said[:SNIPPET] + ("…" if len(said) > SNIPPET else "")
            status = exc.status_code
            result = ChatResult("http_error", error=f"HTTP {status}: {snippet}", http_status=status)
            failure = vendor.read_failure(
                status, said, has_images=with_images, max_tokens=cfg.max_tokens
            )
            wait = vendor.server_wait_s(exc.response.headers, said)
        except openai.APIConnectionError as exc:
            result = ChatResult("http_error", error=f"connection failed: {type(exc).__name__}")
            failure = vendor.NO_ANSWER
        except openai.APIError as exc:  # anything else the client raises: one failed call
            result = ChatResult("http_error", error=f"{type(exc).__name__}: {exc}")
            failure = vendor.NO_ANSWER
        except (OSError, ValueError, LookupError) as exc:  # a transport the client left raw
            result = ChatResult("http_error", error=f"{type(exc).__name__}: {exc}")
            failure = vendor.NO_ANSWER
        except RuntimeError as exc:  # missing key: not retryable, not a paid call
            return ChatResult(outcome="http_error", error=str(exc), permanent=True)
        except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl-C: keep what was asked
            if sent:
                params = recorded_params(cfg, temperature, extra, adapted)
                elapsed = time.monotonic() - started
                record_interrupted(store, cfg, purpose, stored_messages, params, elapsed, job_key)
            raise
        result.latency_ms = round((time.monotonic() - started) * 1000, 1)
        step = next_step(cfg, failure, wait, waited, attempt, max_attempts, adapted, RETRY_BASE_S)
        if failure is not None:
            result.failure = failure.label
            result.permanent = failure.permanent and step.action != "retry"
            if step.note:
                result.error = f"{result.error} ({step.note})"
        params = recorded_params(cfg, temperature, extra, adapted)
        result.call_id = record(store, cfg, purpose, stored_messages, params, result, job_key)
        after_record(result)
        if step.action == "adapt" and failure is not None and failure.adapt:
            endpoints.adapt(cfg, failure.adapt)
            continue
        if step.action == "stop_model" and failure is not None:
            endpoints.disable(cfg, disabled_message(purpose, cfg, result.error, failure, extra))
        if step.action != "retry":
            return result
        waited += step.delay_s
        await asyncio.sleep(step.delay_s)
