"""OpenAI-compatible endpoints declared as data, and one recorded, retried chat call.

Models come from generators/models.json (presets), or from the file named by --models-file or
$REFPOOL_MODELS. Keys are read from the environment variable the entry names and are never
logged, stored or put into an error message. The `openai` package is imported lazily.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from refpool.contracts import ModelCall
from refpool.store import Store, model_calls, sha256_bytes

MODELS_ENV = "REFPOOL_MODELS"
REFUSAL = re.compile(
    r"\b(I can(?:no|')t help|I can(?:no|')t assist|I(?:'m| am) (?:sorry|unable)|I won't)\b", re.I
)


@dataclass(frozen=True)
class ModelConfig:
    name: str  # our handle, e.g. "glm-5.2"
    model: str  # the endpoint's model id
    base_url: str
    key_env: str | None = "HF_TOKEN"
    accepts_images: bool = False
    temperatures: tuple[float, ...] = (0.6, 0.9, 1.1)
    max_tokens: int = 2400
    timeout_s: float = 180.0
    concurrency: int = 4
    price_in: float | None = None  # USD per million tokens
    price_out: float | None = None
    json_mode: bool = False  # send response_format=json_object to critics

    def api_key(self) -> str:
        if not self.key_env:
            return "not-needed"  # local servers (vLLM, llama.cpp, Ollama) ignore it
        key = os.environ.get(self.key_env)
        if not key:
            raise RuntimeError(
                f"model {self.name!r} needs an API key in ${self.key_env}; export it, point"
                f" --models-file at your own endpoints, or use --generator procedural"
            )
        return key

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        if self.price_in is None or self.price_out is None or prompt_tokens is None:
            return None
        return round(
            (prompt_tokens * self.price_in + (completion_tokens or 0) * self.price_out) / 1e6, 6
        )


def load_models(path: str | Path | None = None) -> dict[str, ModelConfig]:
    """name -> ModelConfig from `path`, $REFPOOL_MODELS, or the shipped presets."""
    path = path or os.environ.get(MODELS_ENV)
    if path:
        text = Path(path).read_text("utf-8")
        where = str(path)
    else:
        text = resources.files("generators").joinpath("models.json").read_text("utf-8")
        where = "generators/models.json"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where} is not valid JSON: {exc}") from None
    entries = data.get("models", data)
    # Unknown keys are ignored, so older files load (e.g. `roles`, which nothing reads any more).
    models = {}
    for name, entry in entries.items():
        if name.startswith("_"):
            continue
        if "model" not in entry or "base_url" not in entry:
            raise ValueError(f"{where}: model {name!r} needs at least 'model' and 'base_url'")
        price = entry.get("price_per_mtok") or {}
        models[name] = ModelConfig(
            name=name,
            model=entry["model"],
            base_url=entry["base_url"],
            key_env=entry.get("key_env", "HF_TOKEN"),
            accepts_images=bool(entry.get("accepts_images", False)),
            temperatures=tuple(entry.get("temperatures", (0.6, 0.9, 1.1))),
            max_tokens=int(entry.get("max_tokens", 2400)),
            timeout_s=float(entry.get("timeout_s", 180)),
            concurrency=int(entry.get("concurrency", 4)),
            price_in=price.get("input"),
            price_out=price.get("output"),
            json_mode=bool(entry.get("json_mode", False)),
        )
    return models


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


@dataclass
class ChatResult:
    outcome: str  # ok | http_error | timeout (transport level; coders refine "ok")
    content: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    refusal: str | None = None
    call_id: int | None = None
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None


class Endpoints:
    """Per-endpoint concurrency limits and lazily built async clients (one per base URL + key)."""

    def __init__(self, max_concurrency: int | None = None) -> None:
        self.max_concurrency = max_concurrency  # a run's --concurrency caps every endpoint
        self._sems: dict[str, asyncio.Semaphore] = {}
        self._clients: dict[tuple[str, str], Any] = {}

    def semaphore(self, cfg: ModelConfig) -> asyncio.Semaphore:
        if cfg.base_url not in self._sems:
            limit = min(cfg.concurrency, self.max_concurrency or cfg.concurrency)
            self._sems[cfg.base_url] = asyncio.Semaphore(max(1, limit))
        return self._sems[cfg.base_url]

    def client(self, cfg: ModelConfig) -> Any:
        try:
            from openai import AsyncOpenAI
        except ImportError as exc:  # pragma: no cover - openai is a pinned dependency
            raise RuntimeError(
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
    """One chat completion with retries on 429/5xx/timeouts; every attempt is recorded."""
    import openai

    params = {"temperature": temperature, "max_tokens": cfg.max_tokens, "timeout_s": cfg.timeout_s}
    params |= extra or {}
    stored_messages = redact_images(messages)
    result = ChatResult(outcome="http_error")
    for attempt in range(1, max_attempts + 1):
        started = time.monotonic()
        retry_after = None
        try:
            async with endpoints.semaphore(cfg):
                client = endpoints.client(cfg)
                started = time.monotonic()
                response = await client.chat.completions.create(
                    model=cfg.model,
                    messages=messages,
                    temperature=temperature,
                    max_tokens=cfg.max_tokens,
                    timeout=cfg.timeout_s,
                    **(extra or {}),
                )
            choice = response.choices[0] if response.choices else None
            message = choice.message if choice else None
            extras = (message.model_extra or {}) if message else {}
            usage = response.usage
            result = ChatResult(
                outcome="ok",
                content=(message.content or "") if message else "",
                reasoning=str(extras.get("reasoning_content") or extras.get("reasoning") or ""),
                finish_reason=choice.finish_reason if choice else None,
                refusal=getattr(message, "refusal", None),
                prompt_tokens=usage.prompt_tokens if usage else None,
                completion_tokens=usage.completion_tokens if usage else None,
            )
        except openai.APITimeoutError:
            result = ChatResult(outcome="timeout", error=f"no reply within {cfg.timeout_s:g} s")
        except openai.APIStatusError as exc:
            result = ChatResult(outcome="http_error", error=_status_error(exc))
            retry_after = _retry_after(exc)
            if not (exc.status_code == 429 or exc.status_code >= 500):
                attempt = max_attempts  # 4xx other than 429 will not get better by waiting
        except openai.APIConnectionError as exc:
            result = ChatResult(
                outcome="http_error", error=f"connection failed: {type(exc).__name__}"
            )
        except RuntimeError as exc:  # missing key: not retryable, not a paid call
            result = ChatResult(outcome="http_error", error=str(exc))
            attempt = max_attempts
        result.latency_ms = round((time.monotonic() - started) * 1000, 1)
        result.call_id = _record(store, cfg, purpose, stored_messages, params, result, job_key)
        if result.outcome == "ok" or attempt >= max_attempts:
            return result
        delay = retry_after if retry_after is not None else RETRY_BASE_S * 2 ** (attempt - 1)
        await asyncio.sleep(min(60.0, delay) * random.uniform(0.8, 1.2))
    return result


def _status_error(exc: Any) -> str:
    body = ""
    try:
        body = json.dumps(exc.body)[:300] if exc.body is not None else ""
    except (TypeError, ValueError):
        body = ""
    return f"HTTP {exc.status_code}: {body}".strip()


def _retry_after(exc: Any) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None


def _record(
    store: Store,
    cfg: ModelConfig,
    purpose: str,
    messages: list[dict],
    params: dict[str, Any],
    result: ChatResult,
    job_key: str | None,
) -> int:
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
    )


def classify(result: ChatResult, extract: Callable[[str], str | None]) -> tuple[str, str | None]:
    """(outcome, program) for a coder reply: ok, no_code, truncated, empty_reasoning, refusal."""
    if result.outcome != "ok":
        return result.outcome, None
    content = result.content or ""
    if not content.strip():
        if result.reasoning.strip():
            return "empty_reasoning", None
        return ("truncated" if result.finish_reason == "length" else "no_code"), None
    program = extract(content)
    if program is None:
        if result.refusal or REFUSAL.search(content):
            return "refusal", None
        return ("truncated" if result.finish_reason == "length" else "no_code"), None
    if result.finish_reason == "length":
        return "truncated", program  # keep it: the gate reports what is missing
    return "ok", program
