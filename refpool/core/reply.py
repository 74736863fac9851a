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
  run (Hermes/Qwen `<tool_call>{json}</tool_call>`, Qwen3-Coder `<parameter=…>`, GLM
  `<arg_value>`, Mistral `[TOOL_CALLS]`).

`read_message` turns the message as the vendor sent it into a `Reply`; each role then parses
`Reply.answer` only (and the coder, failing that, the tool calls' text, then the reasoning).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from refpool.core.text import repair_text

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
# Keys of a tool call's arguments that hold a file's text, best first.
_CODE_KEYS = ("content", "code", "source", "program", "sketch", "text", "file_content", "body")
_TOOL_MARKUP = re.compile(
    r"<tool_call>(.*?)(?:</tool_call>|\Z)|\[TOOL_CALLS\](.*)|<\|python_tag\|>(.*)", re.S | re.I
)
_XML_VALUE = re.compile(
    r"<(?:parameter=[^>]*|arg_value)>\n?(.*?)\n?(?:</(?:parameter|arg_value)>|\Z)", re.S | re.I
)


@dataclass(frozen=True)
class Reply:
    """One message as read: the answer apart from the reasoning and the tool calls."""

    content: str  # the text as sent (text parts joined), inline reasoning included: stored
    reasoning: str  # the reasoning the server sent apart from the text: stored
    answer: str  # the final answer: content without any reasoning or tool-call markup
    thought: str  # all the reasoning, the server's and the inline blocks'
    tool_texts: tuple[str, ...] = ()  # file texts written through tool calls, in order
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


def strip_reasoning(text: str) -> str:
    """The text without its inline reasoning."""
    return split_reasoning(text)[0]


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value  # not JSON: the text itself may be the program
    return value


def _file_text(args: Any) -> str | None:
    """The file text in a tool call's arguments: a code-like key, else the longest string."""
    if isinstance(args, str):
        return args if args.strip() else None
    if not isinstance(args, Mapping):
        return None
    for key in _CODE_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    nested = [_file_text(v) for v in args.values() if isinstance(v, Mapping)]
    strings = [v for v in args.values() if isinstance(v, str)] + [n for n in nested if n]
    return max(strings, key=len) if strings else None


def _call_args(call: Any) -> Any:
    """A tool call's arguments, whatever the shape (OpenAI, flat, `parameters`)."""
    if not isinstance(call, Mapping):
        return None
    inner = call.get("function")
    function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else call
    for key in ("arguments", "parameters", "args", "input"):
        if key in function:
            return _arguments(function[key])
    return None


def tool_texts(message: Mapping[str, Any]) -> list[str]:
    """File texts in a message's structured tool calls (`tool_calls`, `function_call`)."""
    calls = message.get("tool_calls")
    calls = list(calls) if isinstance(calls, list) else []
    if isinstance(message.get("function_call"), Mapping):
        calls.append({"function": message["function_call"]})
    found = (_file_text(_call_args(call)) for call in calls)
    return [repair_text(t) for t in found if t]


def tool_markup(message: Mapping[str, Any]) -> str:
    """A message's structured tool calls written as Hermes-style `<tool_call>` markup, the
    form a stored reply keeps them in (the reader reads it back like the structured calls)."""
    calls = message.get("tool_calls")
    calls = [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []
    if isinstance(message.get("function_call"), Mapping):
        calls.append({"function": message["function_call"]})
    out = []
    for call in calls:
        function = call.get("function") if isinstance(call.get("function"), Mapping) else call
        name = function.get("name", "")
        out.append(json.dumps({"name": name, "arguments": _call_args(call)}, ensure_ascii=False))
    return "".join(f"\n<tool_call>{text}</tool_call>" for text in out)


def _markup_texts(text: str) -> tuple[str, list[str]]:
    """(text without tool-call markup, the file texts it carried)."""
    found: list[str] = []

    def take(match: re.Match[str]) -> str:
        inner = next((g for g in match.groups() if g is not None), "")
        values = _XML_VALUE.findall(inner)
        if values:  # Qwen3-Coder <parameter=content>, GLM <arg_value>: the longest is the file
            found.append(max(values, key=len))
            return ""
        data = _arguments(inner.strip())
        calls = data if isinstance(data, list) else [data]
        read = (_file_text(_call_args(c)) for c in calls if isinstance(c, Mapping))
        texts = [t for t in read if t]
        if not texts:
            return match.group(0)  # not a tool call after all: leave the text as it was
        found.extend(texts)
        return ""

    return _TOOL_MARKUP.sub(take, text), found


def read_message(message: Mapping[str, Any], finish_reason: str | None = None) -> Reply:
    """A chat message as the vendor sent it, read into a Reply (strings repaired)."""
    text, part_thinking = content_parts(message.get("content"))
    # the first reasoning field sent (routers may send one copy under two names)
    fields = [message.get(k) for k in ("reasoning_content", "reasoning", "thinking")]
    sent = next((f for f in fields if f and isinstance(f, (str, list))), None)
    server = content_parts(sent)[0] + part_thinking
    text, server = repair_text(text), repair_text(server)
    answer, inline = split_reasoning(text)
    answer, marked = _markup_texts(answer)
    refusal = message.get("refusal")
    refusal_text = content_parts(refusal)[0] if refusal else ""
    return Reply(
        content=text,
        reasoning=server,
        answer=answer.strip("\n"),
        thought="\n".join(t for t in (server, inline) if t.strip()),
        tool_texts=tuple(tool_texts(message) + marked),
        finish_reason=finish_reason or message.get("finish_reason"),
        refusal=repair_text(refusal_text) or None,
    )
