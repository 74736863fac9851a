"""Why a judge call gave no verdict, decided from the structure of the reply, and what to do.

In this order: the call failed (the server's error as generators.llm recorded it); the judge
refused (`message.refusal`, a content-filter finish read by refpool.core.finish, or refusal
wording in its answer, in several languages); the answer was empty while reasoning came (the
answer was left in the reasoning only); the answer named neither painting or both; else the
answer was unreadable (a snippet is quoted). A reason is stored with its pair as
"<label>: <detail>", so a stored pair still says why it is unresolved.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from generators import llm, vendor
from generators.attempts import structured_advice
from pool.reward.verdict import Reading
from refpool.core import finish
from refpool.core.errors import RefpoolError
from refpool.core.reply import is_refusal
from refpool.core.store.calibration import JudgedPair

CALL_FAILED, REFUSED, REASONING_ONLY = "call_failed", "refused", "reasoning_only"
UNREADABLE, NEITHER, BOTH = "unreadable", "named_neither", "named_both"
LABELS = {
    CALL_FAILED: "call failed",
    REFUSED: "judge refused",
    REASONING_ONLY: "answer left in the reasoning only",
    UNREADABLE: "unreadable answer",
    NEITHER: "named neither painting",
    BOTH: "named both paintings",
}
_KIND_OF = {label: kind for kind, label in LABELS.items()}
SNIPPET = 120  # characters of an answer quoted in its reason

# What to do when a judge's calls end this way (UNREADABLE depends on the structured mode).
ADVICE = {
    CALL_FAILED: "read the server's error: a rate limit or a 5xx needs only a rerun later (the"
    " verdicts given are kept); anything else needs the judge's models-file entry fixed, or"
    " another judge",
    REFUSED: "the judge declines to compare these paintings: choose another judge (another"
    " vision model, or the heuristic judge)",
    REASONING_ONLY: "the judge answered only in its reasoning: turn its thinking off (for"
    ' Qwen3 on vLLM or SGLang, "extra_body": {"chat_template_kwargs": {"enable_thinking":'
    " false}}) or choose an instruct model; the judge's 220-token budget has no room for"
    " thinking",
    NEITHER: "the judge would not pick one painting: choose another judge",
    BOTH: "the judge named both paintings: choose another judge",
}


class JudgeFailed(RefpoolError):
    """The judge gave no verdict on any pair it was asked about: its result is empty."""


def reason(kind: str, detail: str) -> str:
    """A reason as stored with its pair: the label, then what was seen."""
    return f"{LABELS[kind]}: {detail}"


def reason_kind(text: str) -> str | None:
    """The kind of a stored reason (None for a judge's own reason for its verdict)."""
    return _KIND_OF.get(text.split(":", 1)[0])


def call_failure(result: llm.ChatResult, mode: str) -> str:
    """A failed call's error with what to do; for a refused structured-output mode, the advice
    for the mode this judge sent (a generic hint may name the very mode that was refused)."""
    if result.call_id is None and result.error:  # no call was made: refpool's own message
        return result.error  # (the judge stopped for the run), which says what to do itself
    failure = vendor.from_label(result.failure) or vendor.classify_failure(
        result.http_status, result.error
    )
    if failure.kind == "structured_output" and mode != "none":
        return f"{result.error} ({structured_advice(mode)})"
    return llm.explain(result.error, result.http_status)


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return '"' + flat[:SNIPPET] + ("…" if len(flat) > SNIPPET else "") + '"'


def why_no_verdict(result: llm.ChatResult, reading: Reading | None, mode: str) -> str:
    """The reason a call gave no verdict (see the module's order). `reading` is None when the
    call failed; `mode` is the structured-output mode the judge sent."""
    if result.outcome != "ok" or reading is None:
        return reason(CALL_FAILED, call_failure(result, mode))
    reply = result.reply
    ending = finish.finish_meaning(reply.finish_reason)
    answer = reply.answer.strip()
    if ending == finish.REFUSAL:
        why = f"finish_reason {reply.finish_reason!r}"
        return reason(REFUSED, f"the vendor's filter stopped the reply ({why})")
    if reply.refusal:
        return reason(REFUSED, _quote(reply.refusal))
    if not answer and not reply.tool_args and reply.thought.strip():
        cut = " and was cut off by the token budget" if ending == finish.LENGTH else ""
        return reason(REASONING_ONLY, f"the answer was empty, the reasoning ran on{cut}")
    if is_refusal(answer):
        return reason(REFUSED, _quote(answer))
    if reading.named_both:
        return reason(BOTH, _quote(answer))
    if reading.named_neither:
        return reason(NEITHER, _quote(answer))
    return reason(UNREADABLE, _quote(answer) if answer else "the answer was empty")


def pair_reasons(pair: JudgedPair) -> list[str]:
    """The distinct reasons of the orders of a pair that gave no verdict."""
    winners = (pair.x_first, pair.y_first)
    found = [r for w, r in zip(winners, pair.reasons, strict=False) if w is None]
    if not found and not pair.resolved:
        found = ["no verdict (no reason was stored)"]
    return list(dict.fromkeys(found))


def unresolved_entry(pair: JudgedPair, name: str, **ids: Any) -> dict[str, Any]:
    """An unresolved pair for the output: its name, ids, reasons and their kinds."""
    reasons = pair_reasons(pair)
    kinds = [reason_kind(r) for r in reasons]
    problems = list(dict.fromkeys(k for k in kinds if k))
    return {"pair": name, **ids, "reasons": reasons, "problems": problems}


def unresolved_lines(entries: list[dict[str, Any]]) -> list[str]:
    """Human lines: each distinct reason once, with every pair it left unresolved."""
    if not entries:
        return []
    groups: dict[str, list[str]] = {}
    for entry in entries:
        groups.setdefault("; ".join(entry["reasons"]), []).append(entry["pair"])
    lines = [f"unresolved pairs (no verdict in one order or both): {len(entries)}"]
    for why, names in groups.items():
        lines.append(f"  {why}  [{len(names)} pair{'s' if len(names) > 1 else ''}]")
        lines.append(f"    {'; '.join(names)}")
    return lines


def advice(kind: str, mode: str) -> str:
    """What to do about calls that ended with `kind`, for a judge sending `mode`."""
    if kind != UNREADABLE:
        return ADVICE[kind]
    if mode == "none":
        return (
            'no verdict could be read: set "structured_output" to "json_schema" (or'
            ' "json_object") so the judge must answer {"winner": ...}, or choose another judge'
        )
    return "no verdict could be read, even with structured output: choose another judge"


def failure_message(label: str, entries: list[dict[str, Any]], mode: str) -> str:
    """Why a judge that resolved nothing failed: the commonest reasons, and what to do."""
    reasons = Counter(r for e in entries for r in e["reasons"])
    said = "; ".join(f"{r} ({n}x)" for r, n in reasons.most_common(3))
    kinds = Counter(reason_kind(r) or UNREADABLE for r in reasons.elements())
    todo = " ".join(f"What to do: {advice(k, mode)}." for k, _ in kinds.most_common(2))
    asked = f"any of the {len(entries)} pairs" if len(entries) > 1 else "the one pair"
    return (
        f"judge {label} gave no verdict on {asked} it was asked about: {said}. {todo} Nothing"
        " was measured; fix the judge and rerun."
    )
