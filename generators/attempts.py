"""One attempt of a chat call: the request as sent (with any adaptation), what a 200 that the
vendor broke off means, and what to do next after a failure: retry, wait, adapt, stop the
model, or stop asking. `generators.llm.chat` runs the loop; the decisions are made here.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from generators import vendor
from generators.modelcfg import ModelConfig
from generators.replies import ChatResult
from refpool.core import finish
from refpool.core.store import model_calls
from refpool.core.text import repair_text

RETRY_AFTER_MARGIN_S = 0.05  # so a timer's resolution never wakes us before the server said
MAX_GUIDED_ATTEMPTS = 32  # retries a server times itself stop here even within the budget
SNIPPET = 500  # characters of a failed call's body kept in its error
MAX_COMPLETION_TOKENS, DROP_TEMPERATURE = "max_completion_tokens", "drop_temperature"
ADAPTATIONS = {  # what each adaptation does, as a run's note says it
    MAX_COMPLETION_TOKENS: "sent max_tokens as max_completion_tokens",
    DROP_TEMPERATURE: "sent no temperature (the model takes only its default)",
}


def adaptation_notes(adapted: dict[str, list[str]]) -> list[str]:
    """One line per model whose requests a run adapted, for the user."""
    return [
        f"{name}: the server refused a request field, so refpool "
        + "; ".join(ADAPTATIONS.get(change, change) for change in changes)
        + ' (recorded with each call; "adapt": false in its entry stops the model instead)'
        for name, changes in adapted.items()
        if changes
    ]


def request_fields(
    cfg: ModelConfig, temperature: float, extra: dict | None, adapted: frozenset[str]
) -> dict[str, Any]:
    """The request's sampling fields as sent: the entry's, changed by any adaptation."""
    fields: dict[str, Any] = {} if DROP_TEMPERATURE in adapted else {"temperature": temperature}
    tokens = "max_completion_tokens" if MAX_COMPLETION_TOKENS in adapted else "max_tokens"
    fields[tokens] = cfg.max_tokens
    return fields | (extra or {})


def recorded_params(
    cfg: ModelConfig, temperature: float, extra: dict | None, adapted: frozenset[str]
) -> dict[str, Any]:
    """The parameters a call is recorded with (never a header's value: it may be a key)."""
    params = request_fields(cfg, temperature, extra, adapted) | {"timeout_s": cfg.timeout_s}
    params["config"] = cfg.fingerprint()  # a config refusal holds while this is unchanged
    if cfg.extra_body:
        params["extra_body"] = cfg.extra_body
    if cfg.headers:
        params["headers"] = sorted(cfg.headers)
    if adapted:
        params["adapted"] = sorted(adapted)
    return params


def vendor_cut(result: ChatResult, body: bytes) -> vendor.Failure | None:
    """A 200 read by its finish reason and any per-choice error: a reply the vendor broke off
    (`error`, `network_error`, `insufficient_system_resource`, a cut stream, or
    `choices[0].error`) or whose context ran out under it is a failed, unpaid call, never the
    model's answer. Returns its Failure (None: a usable reply)."""
    choice_error = _choice_error(body) if b'"error"' in body else None
    meaning = finish.finish_meaning(result.finish_reason)
    if choice_error is None and meaning not in finish.NOT_THE_MODELS:
        return None
    context = meaning == finish.CONTEXT
    said = choice_error or (
        "the context window ran out mid-reply" if context else "the vendor broke the reply off"
    )
    result.outcome = "http_error"
    result.error = f"HTTP 200 finish_reason {result.finish_reason!r}: {said[:SNIPPET]}"
    result.finish_reason = result.finish_reason or "error"
    return vendor.CONTEXT_CUT if context else vendor.INTERRUPTED


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


def response_text(exc: Any) -> str:
    """The whole body of a failed HTTP answer, as text."""
    try:
        return repair_text(exc.response.text.strip())
    except Exception:  # noqa: BLE001 - the status alone still says what happened
        try:
            return json.dumps(exc.body, ensure_ascii=False) if exc.body is not None else ""
        except (TypeError, ValueError):
            return ""


def has_images(messages: list[dict]) -> bool:
    """Did the request carry images? (evidence for reading an image-related refusal)"""
    return any(
        isinstance(part, dict) and part.get("type") == "image_url"
        for msg in messages
        if isinstance(msg.get("content"), list)
        for part in msg["content"]
    )


@dataclass(frozen=True)
class Step:
    """What to do after an attempt: done, retry (after `delay_s`), adapt, stop_model."""

    action: str
    delay_s: float = 0.0
    note: str = ""  # added to the call's error: what was decided, and why


def next_step(
    cfg: ModelConfig,
    failure: vendor.Failure | None,
    wait_s: float | None,
    waited_s: float,
    attempt: int,
    max_attempts: int,
    adapted: frozenset[str],
    backoff_s: float,
) -> Step:
    """The decision after one attempt, from what the failure means (never from repetition)."""
    if failure is None:
        return Step("done")
    if failure.adapt and cfg.adapt and failure.adapt not in adapted:
        return Step("adapt", note=f"refpool adapts the request: {failure.adapt}, and asks again")
    if failure.means == vendor.REQUEST:
        return Step("done")
    if failure.means == vendor.CONFIG:
        return Step("stop_model")
    if wait_s is not None:  # the server says when it clears: a limit, not a verdict
        if waited_s + wait_s > cfg.retry_budget_s:
            return Step(
                "stop_model",
                note=f"the server says it clears {vendor.explain_wait(wait_s)}, past the retry"
                f" budget of {cfg.retry_budget_s:g} s: the model is stopped for this run and a"
                " rerun asks again; raise retry_budget_s in the models file to wait longer",
            )
        if attempt >= MAX_GUIDED_ATTEMPTS:
            return Step("done")
        delay = wait_s * random.uniform(1.0, 1.1) + RETRY_AFTER_MARGIN_S
        return Step("retry", delay)
    if failure.means == vendor.ACCOUNT:
        return Step("stop_model")
    delay = min(60.0, backoff_s * 2 ** (attempt - 1)) * random.uniform(0.8, 1.2)
    if attempt >= max_attempts or waited_s + delay > cfg.retry_budget_s:
        return Step("done")  # still the vendor's: a rerun asks again
    return Step("retry", delay)


def _sent_mode(extra: dict | None) -> str | None:
    return ((extra or {}).get("response_format") or {}).get("type")


def structured_advice(refused: str | None) -> str:
    """What to set when the server refuses the structured-output mode `refused`: never the
    mode it just refused (the one home of this advice, for every role)."""
    other = '"json_object" or "none"' if refused == "json_schema" else '"none"'
    return (
        f'the server refuses "structured_output" "{refused}": set "structured_output" to'
        f" {other} for this model in the models file"
    )


def disabled_message(
    purpose: str,
    cfg: ModelConfig,
    error: str | None,
    failure: vendor.Failure,
    extra: dict | None = None,
) -> str:
    """The one message a run prints for a model it stopped, naming the cause."""
    error = model_calls.scrub_secrets(error) or "refused the request"
    head = f"{purpose} {cfg.name} ({cfg.model} at {cfg.base_url}) was disabled for this run"
    if failure.means == vendor.CONFIG:
        hint = (
            structured_advice(_sent_mode(extra))
            if failure.field == "structured_output"
            else failure.hint
        )
        change = f'"{failure.field}"' if failure.field else "its entry"
        return (
            f"{head}: {error}. The models file is the cause: change {change} in the entry for"
            f" {cfg.name} ({hint}); a rerun asks it again once the entry changes."
        )
    if failure.means == vendor.ACCOUNT:
        hint = f" ({failure.hint})" if failure.hint else ""
        return f"{head}: {error}. The account is the cause{hint}; a rerun asks it again."
    return f"{head}: {error}. The vendor is the cause; a rerun asks it again."
