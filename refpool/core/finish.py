"""A reply's finish reason, read by what it means.

Vendors spell the same ending many ways: OpenAI's `content_filter` is Zhipu's `sensitive` and
Gemini's `SAFETY`; an error met mid-generation is OpenRouter's `error` and Zhipu's
`network_error`. Every reader (the transport, the reply reader, the summary) asks this table.
"""

from __future__ import annotations

STOP, LENGTH, TOOL_CALLS, REFUSAL, VENDOR_ERROR, OTHER = (
    "stop",
    "length",
    "tool_calls",
    "refusal",
    "vendor_error",
    "other",
)

_SPELLINGS = {
    STOP: ("stop", "eos", "eos_token", "end_turn", "stop_sequence", "complete", "completed"),
    LENGTH: ("length", "max_tokens", "max_output_tokens", "token_limit", "model_length"),
    TOOL_CALLS: ("tool_calls", "function_call", "tool_use"),
    # the vendor's safety filter stopped the reply: a refusal, not a program
    REFUSAL: (
        "content_filter",
        "sensitive",
        "safety",
        "recitation",
        "blocklist",
        "prohibited_content",
        "spii",
        "refusal",
    ),
    # the vendor failed while generating: what came is not the model's answer
    VENDOR_ERROR: (
        "error",
        "network_error",
        "server_error",
        "internal_error",
        "abort",
        "aborted",
        "cancelled",
        "canceled",
    ),
}
_MEANING = {spelling: meaning for meaning, names in _SPELLINGS.items() for spelling in names}
CUT = frozenset(_SPELLINGS[LENGTH])  # a reply the budget cut short


def finish_meaning(reason: str | None) -> str:
    """stop, length, tool_calls, refusal, vendor_error or other (None: the server said nothing,
    which every server means as a normal stop)."""
    if reason is None or not str(reason).strip():
        return STOP
    return _MEANING.get(str(reason).strip().lower(), OTHER)
