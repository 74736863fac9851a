"""Tool calls in a reply: structured ones, and the markup a server leaves in the text.

A structured call is OpenAI's `message.tool_calls` (arguments as a JSON string or an object) or
the legacy `function_call`. When a server's tool parser does not run (or does not know the
model), the call stays in the text, in its model family's own markers. Each family is one row
of FAMILIES: where one call opens, where it closes (a call cut off runs to the end of the
text), and, for families that name the function before its arguments, the marker after which
the arguments start. What is between the markers is read the same way for every family:
parameters as XML (`<parameter=k>`, `<parameter name="k">`, `<arg_key>`/`<arg_value>`), else
the first JSON value (in a ```json fence or not), a `{"name", "arguments"}` wrapper unwrapped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from refpool.core.text import repair_text

# Keys of a tool call's arguments that hold a file's text, best first.
_CODE_KEYS = ("content", "code", "source", "program", "sketch", "text", "file_content", "body")
_ARG_KEYS = ("arguments", "parameters", "args", "input")


@dataclass(frozen=True)
class Family:
    """One model family's tool-call markers (regular expressions)."""

    name: str
    opener: str  # where one call starts
    closer: str  # where it ends; the end of the text counts too (a call cut off)
    args_after: str = ""  # inside a call, the arguments start after this marker (if present)


FAMILIES: tuple[Family, ...] = (
    # Hermes and Qwen (JSON inside), Qwen3-Coder (<function=…><parameter=…>), GLM (<arg_value>)
    Family("hermes", r"<tool_call>", r"</tool_call>"),
    Family("minimax", r"<minimax:tool_call>", r"</minimax:tool_call>"),
    # DeepSeek V3/R1: function<sep>NAME\n```json{…}```; V3.1: NAME<sep>{…}
    Family("deepseek", r"<｜tool▁call▁begin｜>", r"<｜tool▁call▁end｜>", r"<｜tool▁sep｜>"),
    Family(
        "kimi", r"<\|tool_call_begin\|>", r"<\|tool_call_end\|>", r"<\|tool_call_argument_begin\|>"
    ),
    Family("llama", r"<function=[^>\n]*>", r"</function>"),  # Llama's custom tool format
    # Mistral: [TOOL_CALLS][{…}], or [TOOL_CALLS]NAME[ARGS]{…} once per call
    Family("mistral", r"\[TOOL_CALLS\]", r"\[/TOOL_CALLS\]|(?=\[TOOL_CALLS\])", r"\[ARGS\]"),
    Family("python-tag", r"<\|python_tag\|>", r"<\|eom_id\|>|<\|eot_id\|>"),
)
# Markers around a family's calls that carry nothing themselves: dropped from the answer.
_SECTIONS = re.compile(
    r"<｜tool▁calls▁(?:begin|end)｜>|<\|tool_calls_section_(?:begin|end)\|>", re.I
)
_CALLS = tuple(
    (family, re.compile(rf"{family.opener}(.*?)(?:{family.closer}|\Z)", re.S | re.I))
    for family in FAMILIES
)
_XML_PARAM = re.compile(
    r"<parameter(?:=([^>\s]+)|\s+name=\"([^\"]*)\")\s*>\n?(.*?)\n?(?:</parameter>|\Z)",
    re.S | re.I,
)
_GLM_VALUE = re.compile(
    r"(?:<arg_key>(.*?)</arg_key>\s*)?<arg_value>\n?(.*?)\n?(?:</arg_value>|\Z)", re.S | re.I
)
_JSON_START = re.compile(r"[{\[]")


def arguments(value: Any) -> Any:
    """A call's arguments as data: a JSON string parsed, anything else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value  # not JSON: the text itself may be the program
    return value


def file_text(args: Any) -> str | None:
    """The file text in a tool call's arguments: a code-like key, else the longest string."""
    if isinstance(args, str):
        return args if args.strip() else None
    if not isinstance(args, Mapping):
        return None
    for key in _CODE_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    nested = [file_text(v) for v in args.values() if isinstance(v, Mapping)]
    strings = [v for v in args.values() if isinstance(v, str)] + [n for n in nested if n]
    return max(strings, key=len) if strings else None


def call_args(call: Any) -> Any:
    """A tool call's arguments, whatever the shape (OpenAI, flat, `parameters`)."""
    if not isinstance(call, Mapping):
        return None
    inner = call.get("function")
    function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else call
    for key in _ARG_KEYS:
        if key in function:
            return arguments(function[key])
    return None


def structured_calls(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A message's structured tool calls (`tool_calls`, then the legacy `function_call`)."""
    calls = message.get("tool_calls")
    found = [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []
    if isinstance(message.get("function_call"), Mapping):
        found.append({"function": message["function_call"]})
    return found


def structured_args(message: Mapping[str, Any]) -> list[Any]:
    """The arguments of each structured tool call, in order (calls without any left out)."""
    return [a for a in (call_args(c) for c in structured_calls(message)) if a is not None]


def tool_texts(message: Mapping[str, Any]) -> list[str]:
    """File texts in a message's structured tool calls (`tool_calls`, `function_call`)."""
    found = (file_text(args) for args in structured_args(message))
    return [repair_text(t) for t in found if t]


def tool_markup(message: Mapping[str, Any]) -> str:
    """A message's structured tool calls written as Hermes-style `<tool_call>` markup, the
    form a stored reply keeps them in (the reader reads it back like the structured calls)."""
    out = []
    for call in structured_calls(message):
        inner = call.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else call
        name = function.get("name", "")
        out.append(json.dumps({"name": name, "arguments": call_args(call)}, ensure_ascii=False))
    return "".join(f"\n<tool_call>{text}</tool_call>" for text in out)


def _xml_params(body: str) -> dict[str, str] | None:
    """Parameters written as XML (Qwen3-Coder, MiniMax, GLM), or None when there are none."""
    params = {a or b: value for a, b, value in _XML_PARAM.findall(body)}
    for i, (key, value) in enumerate(_GLM_VALUE.findall(body)):
        params[key.strip() or f"arg{i}"] = value
    return params or None


def _first_json(body: str) -> Any:
    """The first JSON value in a call's body (after a name or inside a fence), else None."""
    start = _JSON_START.search(body)
    if start is None:
        return None
    try:
        return json.JSONDecoder().raw_decode(body, start.start())[0]
    except ValueError:
        return None  # cut off or not JSON: not read as a call


def _unwrapped(data: Any) -> list[Any]:
    """Arguments of JSON read from a call: a `{"name", "arguments"}` wrapper (or a list of
    them) unwrapped, plain arguments kept as they are."""
    items = data if isinstance(data, list) else [data]
    out = []
    for item in items:
        if isinstance(item, Mapping) and "name" in item and any(k in item for k in _ARG_KEYS):
            out.append(call_args(item))
        elif isinstance(item, Mapping) and item:
            out.append(item)
    return [a for a in out if a is not None]


def _call_body_args(family: Family, body: str) -> list[Any]:
    if family.args_after:
        marker = re.search(family.args_after, body, re.I)
        body = body[marker.end() :] if marker else body
    params = _xml_params(body)
    return [params] if params else _unwrapped(_first_json(body))


def read_markup(text: str) -> tuple[str, list[Any]]:
    """(text without tool-call markup, the arguments of each call it carried, in order).

    A span whose body reads as no call (prose after `[TOOL_CALLS]`, a cut-off JSON) is left in
    the text as it was, so whatever it holds can still be found there."""
    found: list[Any] = []  # family by family, each family's calls in order
    for family, pattern in _CALLS:

        def take(match: re.Match[str], family: Family = family) -> str:
            args = _call_body_args(family, match.group(1))
            if not args:
                return match.group(0)
            found.extend(args)
            return ""

        text = pattern.sub(take, text)
    return _SECTIONS.sub("", text), found
