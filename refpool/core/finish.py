"""A reply's finish reason, read by what it means.

Vendors spell the same ending many ways: OpenAI's `content_filter` is Zhipu's `sensitive` and
Gemini's `SAFETY`; an error met mid-generation is OpenRouter's `error`, Zhipu's
`network_error` and DeepSeek's `insufficient_system_resource`. The spellings are data
(refpool/core/vendor_spellings.toml, `[finish]`); every reader (the transport, the reply
reader, the summary) asks this module.
"""

from __future__ import annotations

from refpool.core.spellings import spellings

STOP, LENGTH, TOOL_CALLS, REFUSAL, VENDOR_ERROR, CONTEXT, OTHER = (
    "stop",
    "length",
    "tool_calls",
    "refusal",
    "vendor_error",
    "context",
    "other",
)
# Endings that are never the model's work: the vendor broke the reply off, or the context
# window ran out under it. Such a reply is a failed, unpaid call, retried.
NOT_THE_MODELS = frozenset({VENDOR_ERROR, CONTEXT})
_MEANING = {
    spelling: meaning for meaning, names in spellings().finish.items() for spelling in names
}
CUT = frozenset(spellings().finish[LENGTH])  # a reply the budget cut short


def finish_meaning(reason: str | None) -> str:
    """stop, length, tool_calls, refusal, vendor_error, context or other (None: the server
    said nothing, which every server means as a normal stop)."""
    if reason is None or not str(reason).strip():
        return STOP
    return _MEANING.get(str(reason).strip().lower(), OTHER)


def is_cut_by_vendor(reason: str | None) -> bool:
    """Did the vendor (not the model) end this reply?"""
    return finish_meaning(reason) in NOT_THE_MODELS
