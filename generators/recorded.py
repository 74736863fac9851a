"""Calls as the store keeps them: recorded first, read back as `chat` returned them, and what
earlier runs say about a request or a model (refused for good, or asked again).

Every paid call is saved before anything else reads it, so a crash loses nothing paid for and a
rerun finds it by job key; text no store takes (a lone UTF-16 surrogate, valid JSON) is
repaired first. Keys are scrubbed from every error before it is stored or shown.
"""

from __future__ import annotations

from typing import Any

from generators import vendor
from generators.modelcfg import ModelConfig
from generators.replies import ChatResult
from refpool.core import finish
from refpool.core.contracts import ModelCall
from refpool.core.store import Store, model_calls
from refpool.core.text import repair_data, repair_text


def after_record(result: ChatResult) -> None:
    """A reply the vendor's filter stopped (finish_reason content_filter, sensitive, ...) is a
    refusal, whatever part of an answer came before the stop (the text stays recorded)."""
    if result.outcome == "ok" and finish.finish_meaning(result.finish_reason) == finish.REFUSAL:
        result.refusal = result.refusal or (
            f"stopped by the vendor's filter (finish_reason {result.finish_reason!r})"
        )
        result.content = ""


def explain(error: str | None, status: int | None) -> str:
    """A stored failure's text with what the user can do about it."""
    hint = vendor.classify_failure(status, error).hint
    return f"{error or 'no detail'}" + (f" ({hint})" if hint else "")


def refused_before(
    store: Store, job_key: str, purpose: str, params: dict[str, Any]
) -> ChatResult | None:
    """The request's last recorded failure if this same request (same parameters) was refused
    for good (a moderation refusal, a context too long, the same server failure twice): a
    rerun shows it instead of paying for it again. A failure that stopped the model (a bad
    key, no credit) is asked once more: the user may have fixed it."""
    mine = [c for c in model_calls.by_job_keys(store, [job_key]) if c.purpose == purpose]
    if not mine or mine[-1].outcome == "ok" or mine[-1].params != repair_data(params):
        return None
    last = mine[-1]
    if vendor.classify_failure(last.http_status, last.error).scope == vendor.MODEL:
        return None
    return _stored_result(last, permanent=True) if _permanent(mine) else None


def permanent_refusal(store: Store, cfg: ModelConfig, purpose: str) -> str | None:
    """Why a model refused for good in an earlier run (None if it did not): its latest answered
    call failed in a way that stops the model, or its last two failed identically."""
    calls = model_calls.latest_answered(store, cfg.model, cfg.base_url, purpose, 2)
    if not calls or calls[-1].outcome == "ok":
        return None
    last = calls[-1]
    meaning = vendor.classify_failure(last.http_status, last.error)
    if meaning.scope == vendor.MODEL or (_permanent(calls) and meaning.kind == "server"):
        return explain(last.error, last.http_status)
    return None


def _permanent(calls: list[ModelCall]) -> bool:
    """Do these calls (oldest first) end in a permanent failure?"""
    last = calls[-1]
    if finish.finish_meaning(last.finish_reason) == finish.VENDOR_ERROR:
        return False
    meaning = vendor.classify_failure(last.http_status, last.error)
    if len(calls) < 2 or calls[-2].outcome == "ok":
        return meaning.permanent
    mark = vendor.signature(last.http_status, last.error)
    earlier = vendor.signature(calls[-2].http_status, calls[-2].error)
    return vendor.repeated(meaning, last.http_status, mark, earlier).permanent


def record(
    store: Store,
    cfg: ModelConfig,
    purpose: str,
    messages: list[dict],
    params: dict[str, Any],
    result: ChatResult,
    job_key: str | None,
) -> int:
    """Save the call before anything else reads it. Text from outside is repaired first (a lone
    surrogate is valid JSON but no store takes it), so the call is kept whatever it holds."""
    result.content = repair_text(result.content or "")
    result.reasoning = repair_text(result.reasoning or "")
    result.refusal = repair_text(result.refusal) if result.refusal else result.refusal
    result.error = model_calls.scrub_secrets(repair_text(result.error or "")) or None
    finish = repair_text(result.finish_reason) if isinstance(result.finish_reason, str) else None
    result.finish_reason = finish
    call = ModelCall(
        model=cfg.model,
        base_url=cfg.base_url,
        purpose=purpose,
        messages=repair_data(messages),
        params=repair_data(params),
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


def _stored_result(call: ModelCall, permanent: bool = False) -> ChatResult:
    result = ChatResult(
        outcome=call.outcome,
        content=call.response or "",
        reasoning=call.reasoning or "",
        finish_reason=call.finish_reason,
        refusal=call.refusal,
        call_id=call.id,
        error=call.error,
        http_status=call.http_status,
        permanent=permanent,
    )
    after_record(result)  # read back as `chat` returned it
    return result
