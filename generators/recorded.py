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

INTERRUPTED = "interrupted"  # the outcome of a call the user stopped in flight


def after_record(result: ChatResult) -> None:
    """A reply the vendor's filter stopped (finish_reason content_filter, sensitive, ...) is a
    refusal, whatever part of an answer came before the stop (the text stays recorded)."""
    if result.outcome == "ok" and finish.finish_meaning(result.finish_reason) == finish.REFUSAL:
        result.refusal = result.refusal or (
            f"stopped by the vendor's filter (finish_reason {result.finish_reason!r})"
        )
        result.content = ""


def explain(error: str | None, status: int | None) -> str:
    """A stored failure's text with what the user can do about it (scrubbed again as shown: a
    call recorded before its key was known to the scrubber may hold a fragment of it)."""
    hint = vendor.classify_failure(status, error).hint
    return f"{model_calls.scrub_secrets(error) or 'no detail'}" + (f" ({hint})" if hint else "")


def failure_of(call: ModelCall) -> vendor.Failure:
    """What a recorded failed call meant: as decided when it was made (its `failure`), or for
    a call recorded before that was kept, read again from its status and text."""
    decided = vendor.from_label(call.failure)
    if decided is not None:
        return decided
    if finish.is_cut_by_vendor(call.finish_reason):
        return vendor.INTERRUPTED
    return vendor.classify_failure(call.http_status, call.error)


def refused_before(
    store: Store, job_key: str, purpose: str, params: dict[str, Any]
) -> ChatResult | None:
    """The request's last recorded failure if it was refused for good: the request itself (a
    moderation refusal, a context too long) with the same parameters, or the configuration
    with the same entry. A rerun shows it instead of paying for it again. Whatever the vendor
    or the account caused (an outage, a rate limit, no credit) is asked again: it may be over."""
    mine = [c for c in model_calls.by_job_keys(store, [job_key]) if c.purpose == purpose]
    if not mine or mine[-1].outcome == "ok":
        return None
    last = mine[-1]
    means = failure_of(last).means
    same_request = last.params == repair_data(params)
    same_entry = last.params.get("config") == params.get("config")
    if (means == vendor.REQUEST and same_request) or (means == vendor.CONFIG and same_entry):
        return _stored_result(last, permanent=True)
    return None


def permanent_refusal(store: Store, cfg: ModelConfig, purpose: str) -> str | None:
    """Why a model refused its configuration in an earlier run (None if it did not, or if its
    entry has changed since): its latest answered call was refused for the entry's shape."""
    calls = model_calls.latest_answered(store, cfg.model, cfg.base_url, purpose, 1)
    if not calls or calls[-1].outcome == "ok":
        return None
    last = calls[-1]
    failure = failure_of(last)
    if failure.means == vendor.CONFIG and last.params.get("config") == cfg.fingerprint():
        return explain(last.error, last.http_status)
    return None


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
        served_model=repair_text(result.served_model) if result.served_model else None,
        failure=result.failure,
    )
    return model_calls.save(store, call)


def record_interrupted(
    store: Store,
    cfg: ModelConfig,
    purpose: str,
    messages: list[dict],
    params: dict[str, Any],
    elapsed_s: float,
    job_key: str | None,
) -> int:
    """Record a request the user stopped (Ctrl-C) while it was in flight, with all that is
    known of it: model, prompt, parameters, how long it had waited (no reply, so no tokens:
    requests are not streamed). It is not a reply: a rerun asks it again."""
    result = ChatResult(
        outcome=INTERRUPTED,
        error=f"interrupted after {elapsed_s:.1f} s, before the reply arrived: the run was"
        " stopped (Ctrl-C); a rerun asks it again",
        failure=vendor.STOPPED_BY_USER.label,
    )
    result.latency_ms = round(elapsed_s * 1000, 1)
    return record(store, cfg, purpose, messages, params, result, job_key)


# -- replies already paid for -------------------------------------------------------------------
def paid_reply(store: Store, key: str, purpose: str = "coder") -> tuple[int, ChatResult] | None:
    """(call id, reply) of the latest reply already paid for under this job key, as `chat`
    returned it, or None. A run killed after the model answered reuses it instead of paying twice.
    """
    call = model_calls.latest_paid(store, key, purpose)
    if call is None or call.id is None or finish.is_cut_by_vendor(call.finish_reason):
        return None  # a reply the vendor broke off was never the model's work
    return (call.id, _stored_result(call))


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
        served_model=call.served_model,
        failure=call.failure,
    )
    after_record(result)  # read back as `chat` returned it
    return result
