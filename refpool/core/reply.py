"""Reading one model reply, for every role (coder, critic, judge): what is answer, what is not.

Vendors wrap the answer in many ways; this module is the one place that knows them:
- content as a string or as a list of parts (text parts, and "thinking"/"reasoning" parts);
- reasoning in `reasoning_content` or `reasoning`, or inline: `<think>` (also `<thinking>`,
  `<reasoning>`, `<seed:think>`), Kimi's `◁think▷`, Magistral's `[THINK]`,
  `<|begin_of_thought|>`, and harmony's `<|channel|>analysis` before `final`. An inline block
  may lack its closing tag (cut off: all of it is reasoning) or its opening tag (the server put
  it in the prompt: everything before the lone closer is reasoning);
- tool calls: `message.tool_calls` (arguments as a JSON string or an object), the legacy
  `function_call`, and tool-call markup left in the text when a server's tool parser did not
  run: Hermes/Qwen `<tool_call>`, Qwen3-Coder `<parameter=…>`, GLM `<arg_value>`, Mistral
  `[TOOL_CALLS]`, Llama's `<|python_tag|>` and `<function=…>`, DeepSeek's `<｜tool▁call▁begin｜>`,
  Kimi's `<|tool_call_begin|>`, MiniMax's `<minimax:tool_call>` (refpool.core.tool_calls).

`read_message` turns the message as the vendor sent it into a `Reply`; each role then parses
`Reply.answer` only (and the coder, failing that, the tool calls' text, then the reasoning; the
judge, the tool calls' arguments).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from refpool.core.spellings import spellings
from refpool.core.text import repair_text
from refpool.core.tool_calls import (
    file_text,
    read_markup,
    structured_args,
    tool_markup,
    tool_texts,
)

# tool_markup and tool_texts live with the tool calls, and are read from here like the rest
__all__ = [
    "Reply",
    "content_parts",
    "read_message",
    "split_reasoning",
    "strip_reasoning",
    "tool_markup",
    "tool_texts",
]

_OPEN = r"(?:seed:)?think|thinking|reasoning"
# A whole inline reasoning block, or an opened one running to the end (cut off).
_THINK_BLOCK = re.compile(
    rf"<({_OPEN})>(.*?)(?:</\1>|\Z)|◁think▷(.*?)(?:◁/think▷|\Z)|\[THINK\](.*?)(?:\[/THINK\]|\Z)"
    r"|<\|begin_of_thought\|>(.*?)(?:<\|end_of_thought\|>|\Z)",
    re.S | re.I,
)
# A closer with no opener left in the text: what comes before it was reasoning.
_LONE_CLOSER = re.compile(
    rf"</(?:{_OPEN})>|◁/think▷|\[/THINK\]|<\|end_of_thought\|>|<\|channel\|>final<\|message\|>",
    re.I,
)
_THINKING_PARTS = frozenset({"thinking", "reasoning", "reasoning_content", "redacted_thinking"})


@dataclass(frozen=True)
class Reply:
    """One message as read: the answer apart from the reasoning and the tool calls."""

    content: str  # the text as sent (text parts joined), inline reasoning included: stored
    reasoning: str  # the reasoning the server sent apart from the text: stored
    answer: str  # the final answer: content without any reasoning or tool-call markup
    thought: str  # all the reasoning, the server's and the inline blocks'
    tool_texts: tuple[str, ...] = ()  # file texts written through tool calls, in order
    tool_args: tuple[Any, ...] = ()  # each tool call's arguments (usually a dict), in order
    finish_reason: str | None = None
    refusal: str | None = None


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        return ""
    for key in ("text", "content", "thinking", "reasoning"):
        value = part.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return "".join(_part_text(p) for p in value)
    return ""


def content_parts(value: Any) -> tuple[str, str]:
    """(text, reasoning) of a message's content: a string, or a list of content parts."""
    if value is None:
        return "", ""
    if isinstance(value, str):
        return value, ""
    if not isinstance(value, list):
        return str(value), ""
    text: list[str] = []
    thinking: list[str] = []
    for part in value:
        kind = part.get("type") if isinstance(part, Mapping) else None
        (thinking if kind in _THINKING_PARTS else text).append(_part_text(part))
    return "".join(text), "".join(thinking)


def split_reasoning(text: str) -> tuple[str, str]:
    """(answer, reasoning) of a text with reasoning inline (see the module's list)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    thought = []

    def drop(match: re.Match[str]) -> str:
        thought.append(next((g for g in match.groups()[1:] if g is not None), ""))
        return ""

    text = _THINK_BLOCK.sub(drop, text)
    closers = list(_LONE_CLOSER.finditer(text))
    if closers:
        thought.insert(0, text[: closers[-1].start()])
        text = text[closers[-1].end() :]
    return text, "\n".join(t for t in thought if t.strip())


_CURLY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"'})


def is_refusal(text: str) -> bool:
    """Does an answer decline in words, in any language the spellings table knows
    (refpool/core/vendor_spellings.toml, `[[refusal]]`)? Asked only of a reply with no
    answer in it (no program, no verdict)."""
    plain = text.translate(_CURLY)
    return any(row.pattern.search(plain) for row in spellings().refusals)


def strip_reasoning(text: str) -> str:
    """The text without its inline reasoning."""
    return split_reasoning(text)[0]


def read_message(message: Mapping[str, Any], finish_reason: str | None = None) -> Reply:
    """A chat message as the vendor sent it, read into a Reply (strings repaired)."""
    text, part_thinking = content_parts(message.get("content"))
    # the first reasoning field sent (routers may send one copy under two names)
    fields = [message.get(k) for k in ("reasoning_content", "reasoning", "thinking")]
    sent = next((f for f in fields if f and isinstance(f, (str, list))), None)
    server = content_parts(sent)[0] + part_thinking
    text, server = repair_text(text), repair_text(server)
    answer, inline = split_reasoning(text)
    answer, marked = read_markup(answer)
    marked_texts = [t for t in (file_text(a) for a in marked) if t]
    refusal = message.get("refusal")
    refusal_text = content_parts(refusal)[0] if refusal else ""
    return Reply(
        content=text,
        reasoning=server,
        answer=answer.strip("\n"),
        thought="\n".join(t for t in (server, inline) if t.strip()),
        tool_texts=tuple(tool_texts(message) + marked_texts),
        tool_args=tuple(structured_args(message) + marked),
        finish_reason=finish_reason or message.get("finish_reason"),
        refusal=repair_text(refusal_text) or None,
    )
