"""Reading what a model server sent: the response body, and what a coder's reply amounts to.

Real OpenAI-compatible servers (routers, vLLM, SGLang, Ollama, llama.cpp) do not always answer
politely: a 200 can carry a cut-off JSON body, an `{"error": ...}` object or no choices; the
reasoning can come in `reasoning_content`, `reasoning` or inline `<think>` tags; a refusal can
come in `message.refusal` with empty content. Each is read here into one ChatResult.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from renderer.extract import strip_reasoning

REFUSAL = re.compile(
    r"\b(I\s+(?:can(?:no|')t|can\s+not|am\s+not\s+able\s+to|'m\s+not\s+able\s+to)\s+"
    r"(?:help|assist|do|create|write|comply|provide|fulfil|generate|produce|make)"
    r"|I\s+(?:'m|am)\s+(?:sorry|unable|afraid)|I\s+won't|I\s+will\s+not|I\s+must\s+decline"
    r"|I\s+(?:have\s+to|need\s+to)\s+decline|I\s+apologi[sz]e,?\s+but|Sorry,\s+(?:but\s+)?I)",
    re.I,
)
CUT = frozenset({"length", "max_tokens", "max_output_tokens", "token_limit"})
_CURLY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"'})
_INLINE_THINK = re.compile(r"<(think|thinking|reasoning)>(.*?)(?:</\1>|\Z)", re.S | re.I)
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


def _snippet(text: str) -> str:
    text = text.strip()
    return text[:SNIPPET] + ("…" if len(text) > SNIPPET else "")


def _text(value: Any) -> str:
    """Message content as text: a string, or a list of content parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in value if p
        )
    return "" if value is None else str(value)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_body(raw: bytes, status: int = 200) -> ChatResult:
    """A 2xx response body read into a ChatResult; anything unusable is an http_error that
    keeps the server's text (retried as transient, like a 5xx)."""
    text = raw.decode("utf-8-sig", "replace")
    if text.lstrip().startswith("data:"):  # a stream sent to a non-streaming request
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
    refusal = message.get("refusal")
    return ChatResult(
        outcome="ok",
        content=_text(message.get("content")),
        reasoning=_text(message.get("reasoning_content") or message.get("reasoning")),
        finish_reason=choice.get("finish_reason"),
        refusal=_text(refusal) or None,
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        http_status=status,
    )


def _from_stream(text: str) -> str:
    """Server-sent events folded into one chat.completion body (unparseable lines are kept
    out; if nothing parses, the text is returned as it was, to be reported as malformed)."""
    content, reasoning, finish, usage, ok = [], [], None, None, False
    for line in text.splitlines():
        data = line.removeprefix("data:").strip()
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
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or choice.get("message") or {}
            content.append(_text(delta.get("content")))
            reasoning.append(_text(delta.get("reasoning_content") or delta.get("reasoning")))
            finish = choice.get("finish_reason") or finish
    if not ok:
        return text
    message = {"content": "".join(content), "reasoning_content": "".join(reasoning)}
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return json.dumps({"choices": [choice], "usage": usage})


def is_refusal(text: str) -> bool:
    return bool(REFUSAL.search(text.translate(_CURLY)))


def classify(result: ChatResult, extract: Callable[[str], str | None]) -> tuple[str, str | None]:
    """(outcome, program) for a coder reply.

    ok, truncated (finish_reason "length"), refusal, no_code, empty_reasoning (the answer is
    empty and the reasoning holds no sketch) or reasoning_code (the answer is empty, the reply
    finished normally and the sketch was found in the reasoning: used, and flagged as such).
    """
    if result.outcome != "ok":
        return result.outcome, None
    content = result.content or ""
    cut = result.finish_reason in CUT
    program = extract(content) if content.strip() else None
    if program is not None:
        return ("truncated" if cut else "ok"), program
    answer = strip_reasoning(content.replace("\r\n", "\n"))
    if result.refusal or result.finish_reason == "content_filter" or is_refusal(answer):
        return "refusal", None
    if answer.strip():
        return ("truncated" if cut else "no_code"), None
    thought = result.reasoning + "\n".join(m[1] for m in _INLINE_THINK.findall(content))
    if not thought.strip():
        return ("truncated" if cut else "no_code"), None
    if not cut:
        program = extract(thought)
        if program is not None:
            return "reasoning_code", program
    return "empty_reasoning", None
