"""Finding the sketch inside a model's reply.

Separate from the gate: the gate judges a program, this decides which text is the program.
Rules, as a model would expect them to be read:
- reasoning is not the answer: `<think>…</think>` (and a leading reasoning part closed by a
  lone `</think>`) is dropped before anything else;
- line endings are normalised, so CRLF fences work;
- fences are paired line by line; a block in any language is skipped whole, so the prose
  between two blocks never becomes the program;
- the last complete js / javascript / p5js / untagged block that parses wins (a draft followed
  by "the corrected version" gives the correction); failing that the longest block that parses
  (including an HTML page's inline `<script>`); failing that the longest candidate, so the
  gate can say what is wrong with it (an unterminated fence is reported as truncated);
- bare code without fences loses the prose lines around it.
"""

from __future__ import annotations

import re

from renderer.gate import static_check

JS_TAGS = frozenset({"", "js", "javascript", "p5", "p5js", "p5.js", "es6", "ecmascript"})
# Other languages a model might use for the sketch: used only when no js block parses.
LOOSE_TAGS = frozenset({"jsx", "ts", "typescript", "tsx", "mjs", "node"})
# Reasoning as servers leak it into the answer: <think> (and <thinking>, <reasoning>,
# <seed:think>), Kimi's ◁think▷, Magistral's [THINK], and <|begin_of_thought|> markers.
_THINK = re.compile(
    r"<((?:seed:)?think|thinking|reasoning)>.*?(?:</\1>|\Z)|◁think▷.*?(?:◁/think▷|\Z)"
    r"|\[THINK\].*?(?:\[/THINK\]|\Z)|<\|begin_of_thought\|>.*?(?:<\|end_of_thought\|>|\Z)",
    re.S | re.I,
)
_LONE_CLOSER = re.compile(
    r"</(?:(?:seed:)?think|thinking|reasoning)>|◁/think▷|\[/THINK\]|<\|end_of_thought\|>"
    r"|<\|channel\|>final<\|message\|>",
    re.I,
)
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([\w.+#-]*)[^\n`]*$")
_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)(?:</script\s*>|\Z)", re.S | re.I)
_CODE_START = re.compile(
    r"^\s*(function\b|async\s+function\b|const\b|let\b|var\b|class\b|//|/\*|['\"]use strict"
    r"|brush\s*\.|setup\s*=|draw\s*=|createCanvas\s*\()"
)
_CODE_END = re.compile(r"[};)\]]\s*(//.*)?$")
_MIDLINE_FENCE = re.compile(r"([^\n`])[ \t]*(```)")
_UNPARSED = frozenset({"syntax_error", "truncated"})


def strip_reasoning(text: str) -> str:
    """The reply without its reasoning: `<think>` blocks, and anything before a lone
    `</think>` (servers that put the opening tag in the prompt send only the closer)."""
    text = _THINK.sub("", text)
    closers = list(_LONE_CLOSER.finditer(text))
    if closers:
        text = text[closers[-1].end() :]
    return text


def _blocks(text: str) -> list[tuple[str, str, bool]]:
    """(language tag, body, complete) for every fenced block, paired line by line.

    A fence line with a language tag inside an open block starts a new block: the open one was
    an unfinished draft (a reply never nests fences inside a sketch).
    """
    blocks: list[tuple[str, str, bool]] = []
    body: list[str] = []
    fence, tag = "", ""  # fence: the open fence's marker, "" outside a block
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if not fence:
            if m:
                fence, tag, body = m.group(1), m.group(2).lower(), []
            continue
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            if not m.group(2):  # a closing fence
                blocks.append((tag, "\n".join(body), True))
                fence = ""
                continue
            blocks.append((tag, "\n".join(body), False))  # an unfinished draft
            fence, tag, body = m.group(1), m.group(2).lower(), []
            continue
        body.append(line)
    if fence:
        blocks.append((tag, "\n".join(body), False))
    return blocks


def _scripts(html: str) -> str | None:
    """The inline scripts of an HTML page (the one defining setup, else all of them)."""
    inline = [body for attrs, body in _SCRIPT.findall(html) if "src" not in attrs.lower()]
    inline = [s for s in inline if s.strip()]
    if not inline:
        return None
    with_setup = [s for s in inline if re.search(r"\bsetup\b", s)]
    return with_setup[-1] if with_setup else "\n".join(inline)


def _parses(source: str) -> bool:
    return bool(source.strip()) and not any(v.code in _UNPARSED for v in static_check(source))


def _is_sketch(source: str) -> bool:
    return bool(re.search(r"\bsetup\b|\bdraw\b", source))


def _bare_code(text: str) -> str | None:
    """Bare unfenced code: from its first code line to its last, without the prose around it."""
    if not re.search(r"function\s+(setup|draw)\s*\(|\b(setup|draw)\s*=", text):
        return None
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None:
        return None
    end = max(
        (i for i, line in enumerate(lines) if i >= start and _CODE_END.search(line.rstrip())),
        default=len(lines) - 1,
    )
    return "\n".join(lines[start : end + 1])


def _finish(source: str) -> str:
    return source.strip("\n").rstrip() + "\n"


def extract_program(reply: str) -> str | None:
    """The sketch inside a model reply, or None when there is no code to find (see above)."""
    if not reply or not reply.strip():
        return None
    text = strip_reasoning(reply.replace("\r\n", "\n").replace("\r", "\n"))
    text = _MIDLINE_FENCE.sub(r"\1\n\2", text)  # "Sure! ```js" opens a block too
    if not text.strip():
        return None
    candidates: list[tuple[str, bool]] = []  # (source, is a js block)
    for tag, body, complete in _blocks(text):
        page = "<script" in body.lower() and body.lstrip().startswith("<")
        if tag in ("html", "htm", "xhtml") or page or (tag not in JS_TAGS and "<script" in body):
            script = _scripts(body)
            if script:
                candidates.append((script, False))
        elif tag in JS_TAGS:
            candidates.append((body, complete))
        elif tag in LOOSE_TAGS:
            candidates.append((body, False))
    if not candidates and "```" not in text and "~~~" not in text:
        inline = _scripts(text) if "<script" in text.lower() else None
        bare = inline or _bare_code(text)
        return _finish(bare) if bare else None
    if not candidates:
        return None
    sketches = [(src, js) for src, js in candidates if _is_sketch(src)] or candidates
    parsing = [(src, js) for src, js in sketches if _parses(src)]
    preferred = [src for src, js in parsing if js]
    if preferred:
        return _finish(preferred[-1])
    if parsing:
        return _finish(max((src for src, _ in parsing), key=len))
    return _finish(max((src for src, _ in sketches), key=len))
