"""Reading what a model server sent: the response body, and what a coder's reply amounts to.

Real OpenAI-compatible servers (routers, vLLM, SGLang, Ollama, llama.cpp) do not always answer
politely: a 200 can carry a cut-off JSON body, an `{"error": ...}` object or no choices; a
refusal can come in `message.refusal` with empty content. Each is read here into one
ChatResult. What the message says (its answer apart from reasoning in any form, content parts,
tool calls) is read by refpool.core.reply, the one reader every role uses: `ChatResult.reply`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from refpool.core.finish import LENGTH, finish_meaning
from refpool.core.finish import REFUSAL as REFUSAL_ENDING
from refpool.core.reply import Reply, content_parts, is_refusal, read_message, tool_markup

SNIPPET = 300  # characters of a bad body kept in the error


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
    http_status: int | None = None
    permanent: bool = False  # a 4xx that waiting or repeating will not cure
    served_model: str | None = None  # the body's `model`: what the server says it served
    failure: str | None = None  # a failed call's `means/kind/row` (generators/vendor.py)

    @property
    def reply(self) -> Reply:
        """The message read by the one reader (the same for a fresh and a stored reply)."""
        message: dict[str, Any] = {"content": self.content, "reasoning_content": self.reasoning}
        message["refusal"] = self.refusal
        return read_message(message, self.finish_reason)


def _snippet(text: str) -> str:
    text = text.strip()
    return text[:SNIPPET] + ("…" if len(text) > SNIPPET else "")


def _text(value: Any) -> str:
    return content_parts(value)[0]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_body(raw: bytes, status: int = 200) -> ChatResult:
    """A 2xx response body read into a ChatResult; anything unusable is an http_error that
    keeps the server's text (retried as transient, like a 5xx)."""
    text = raw.decode("utf-8-sig", "replace")
    if _is_stream(text):  # a stream sent to a non-streaming request
        text = _from_stream(text)

    def failed(why: str) -> ChatResult:
        return ChatResult("http_error", error=f"HTTP {status} {why}", http_status=status)

    try:
        data = json.loads(text)
    except ValueError as exc:
        return failed(f"with a malformed body ({exc}): {_snippet(text)!r}")
    if not isinstance(data, dict):
        return failed(f"with a body that is not a JSON object: {_snippet(text)!r}")
    if data.get("error"):
        err = data["error"]
        message = err.get("message", err) if isinstance(err, dict) else err
        return failed(f"carrying an error: {_snippet(_text(message) or json.dumps(err))}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return failed(f"with no choices: {_snippet(text)!r}")
    choice = choices[0]
    message = choice.get("message")
    if message is None and isinstance(choice.get("text"), str):  # completions-style choice
        message = {"content": choice["text"]}
    if not isinstance(message, dict):
        return failed(f"with no message in its choice: {_snippet(text)!r}")
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    read = read_message(message, choice.get("finish_reason"))
    served = data.get("model")  # what the server says it served (a router may fall back)
    return ChatResult(
        outcome="ok",
        # tool calls are kept with the text, in the form the reader reads back from storage
        content=read.content + tool_markup(message),
        reasoning=read.reasoning,
        finish_reason=read.finish_reason,
        refusal=read.refusal,
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        http_status=status,
        served_model=(served.strip() or None) if isinstance(served, str) else None,
    )


def _is_stream(text: str) -> bool:
    """Server-sent events: the first line that is not blank, a `:` comment (a keep-alive such
    as OpenRouter's `: OPENROUTER PROCESSING`) or an `event:`/`id:`/`retry:` field is data."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(":") or line.split(":", 1)[0] in ("event", "id", "retry"):
            continue
        return line.startswith("data:")
    return False


def _from_stream(text: str) -> str:
    """Server-sent events folded into one chat.completion body (unparseable lines are kept
    out; if nothing parses, the text is returned as it was, to be reported as malformed). A
    stream that ends with neither a finish reason nor `[DONE]` was cut by the vendor: its
    finish reason is `stream_cut`, a vendor error (what came is recorded, never used)."""
    content, reasoning, finish, usage, ok, done = [], [], None, None, False, False
    served: str | None = None  # each chunk names the served model; the last one is kept
    calls: dict[int, dict[str, str]] = {}  # tool calls arrive as pieces, by index
    for line in text.splitlines():
        data = line.removeprefix("data:").strip()
        done = done or data == "[DONE]"
        if not line.startswith("data:") or data == "[DONE]":
            continue
        try:
            chunk = json.loads(data)
        except ValueError:
            continue
        if not isinstance(chunk, dict):
            continue
        if chunk.get("error"):
            return data
        ok = True
        usage = chunk.get("usage") or usage
        if isinstance(chunk.get("model"), str) and chunk["model"].strip():
            served = chunk["model"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or choice.get("message") or {}
            content.append(_text(delta.get("content")))
            reasoning.append(_text(delta.get("reasoning_content") or delta.get("reasoning")))
            for piece in delta.get("tool_calls") or []:
                call = calls.setdefault(piece.get("index", 0), {"name": "", "arguments": ""})
                function = piece.get("function") or {}
                call["name"] += function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    if not ok:
        return text
    message: dict[str, Any] = {"content": "".join(content), "reasoning_content": "".join(reasoning)}
    if calls:
        message["tool_calls"] = [{"type": "function", "function": calls[i]} for i in sorted(calls)]
    if finish is None and not done:
        finish = "stream_cut"
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return json.dumps({"choices": [choice], "usage": usage, "model": served})


def classify(result: ChatResult, extract: Callable[[Reply], str | None]) -> tuple[str, str | None]:
    """(outcome, program) for a coder reply.

    ok, truncated (finish_reason "length"), refusal, no_code, empty_reasoning (the answer is
    empty and the reasoning holds no sketch) or reasoning_code (the answer is empty, the reply
    finished normally and the sketch was found in the reasoning: used, and flagged as such).
    `extract` finds the program in a Reply's answer and tool calls (renderer.extract_program).
    """
    if result.outcome != "ok":
        return result.outcome, None
    reply = result.reply
    ending = finish_meaning(result.finish_reason)
    cut = ending == LENGTH
    program = extract(reply) if reply.answer.strip() or reply.tool_texts else None
    if program is not None:
        return ("truncated" if cut else "ok"), program
    if reply.refusal or ending == REFUSAL_ENDING or is_refusal(reply.answer):
        return "refusal", None
    if reply.answer.strip():
        return ("truncated" if cut else "no_code"), None
    if not reply.thought.strip():
        return ("truncated" if cut else "no_code"), None
    if not cut:
        program = extract(Reply(reply.thought, "", reply.thought, ""))
        if program is not None:
            return "reasoning_code", program
    return "empty_reasoning", None
