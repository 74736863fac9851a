"""Finding the sketch inside a model's reply.

Separate from the gate: the gate judges a program, this decides which text is the program.
Rules, as a model would expect them to be read:
- reasoning is not the answer: the reply is read by refpool.core.reply (reasoning in every
  form dropped, content parts joined, tool calls' file texts found), and only the answer and
  the tool calls are searched here;
- line endings are normalised, so CRLF fences work;
- fences are paired line by line; a block in any language is skipped whole, so the prose
  between two blocks never becomes the program;
- a whole sketch (setup, and draw or createCanvas) beats a fragment: a later `draw()`-only
  "Option B" never wins over the complete sketch before it;
- among equals, the last complete js / javascript / p5js / untagged block (or tool-call file)
  that parses wins (a draft followed by "the corrected version" gives the correction); then
  the longest block that parses (including an HTML page's inline `<script>`); failing that
  the longest candidate, so the gate can say what is wrong with it (an unterminated fence is
  reported as truncated);
- HTML-escaped code (`&lt;`, `&amp;&amp;`) is unescaped when that makes it parse;
- bare code without fences loses the prose lines around it, and tags glued to its first or
  last line (`<arg_value>function setup() {`), not the code itself.

Checking that a candidate parses is the static pass's work; a reply with hundreds of drafts
gets one overall deadline for it (`deadline_s`), after which the ranking alone decides.
Callers on an event loop run extraction in a thread (generators/coders.py).
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass

from refpool.core.reply import Reply, read_message
from renderer.gate import static_check

JS_TAGS = frozenset({"", "js", "javascript", "p5", "p5js", "p5.js", "es6", "ecmascript"})
# Other languages a model might use for the sketch: used only when no js block parses.
LOOSE_TAGS = frozenset({"jsx", "ts", "typescript", "tsx", "mjs", "node"})
DEADLINE_S = 3.0  # static checks across all of one reply's drafts
# Any indent: a fence inside a numbered list item is indented by the item's width (4 and more).
_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*([\w.+#-]*)[^\n`]*$")
_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)(?:</script\s*>|\Z)", re.S | re.I)
_CODE_START = re.compile(
    r"^\s*(function\b|async\s+function\b|const\b|let\b|var\b|class\b|//|/\*|['\"]use strict"
    r"|brush\s*\.|setup\s*=|draw\s*=|createCanvas\s*\()"
)
_CODE_END = re.compile(r"[};)\]]\s*(//.*)?$")
_BACKTICKS = re.compile(r"`{3,}")
_UNPARSED = frozenset({"syntax_error", "truncated", "too_long"})
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|apos|nbsp|#\d+|#x[0-9a-f]+);", re.I)
_TAG = r"</?[A-Za-z_][\w:=.\-]*(?:\s[^<>\n]*)?>"
_GLUED_OPEN = re.compile(rf"^(\s*)(?:{_TAG})+(?=\S)")
_GLUED_CLOSE = re.compile(rf"(?<=\S)(?:{_TAG})+\s*$")
_WHOLE_SETUP = re.compile(r"\bfunction\s+setup\s*\(|\bsetup\s*=")
_WHOLE_REST = re.compile(r"\bdraw\b|\bcreateCanvas\s*\(")


def _blocks(text: str) -> list[tuple[str, str, bool]]:
    """(language tag, body, complete) for every fenced block, paired line by line.

    A fence line with a language tag inside an open block starts a new block: the open one was
    an unfinished draft (a reply never nests fences inside a sketch). A fence indented inside a
    list item takes its indent off the block's lines, as Markdown does.
    """
    blocks: list[tuple[str, str, bool]] = []
    body: list[str] = []
    fence, tag, indent = "", "", ""  # fence: the open fence's marker, "" outside a block

    def close(complete: bool) -> None:
        blocks.append((tag, "\n".join(_dedent(line, indent) for line in body), complete))

    for line in text.split("\n"):
        m = _FENCE.match(line)
        if not fence:
            if m:
                indent, fence, tag, body = m.group(1), m.group(2), m.group(3).lower(), []
            continue
        if m and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence):
            if not m.group(3):  # a closing fence
                close(True)
                fence = ""
                continue
            close(False)  # an unfinished draft
            indent, fence, tag, body = m.group(1), m.group(2), m.group(3).lower(), []
            continue
        body.append(line)
    if fence:
        close(False)
    return blocks


def _dedent(line: str, indent: str) -> str:
    """The line without the opening fence's indent (as much of it as the line has)."""
    if not indent:
        return line
    width = len(line) - len(line.lstrip(" \t"))
    return line[min(width, len(indent)) :]


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


def _is_whole(source: str) -> bool:
    return bool(_WHOLE_SETUP.search(source) and _WHOLE_REST.search(source))


@dataclass(frozen=True)
class _Candidate:
    source: str
    js: bool  # a complete js block or a tool call's file: "the last one wins" applies
    order: int


class _Checker:
    """Does a candidate parse (or parse once unescaped)? Within one deadline for the reply."""

    def __init__(self, deadline_s: float) -> None:
        self.until = time.monotonic() + deadline_s

    def parsed(self, source: str) -> str | None:
        """The source that parses (unescaped if that is what parses), else None."""
        if time.monotonic() > self.until:
            return None
        if _parses(source):
            return source
        if _ENTITY.search(source) and time.monotonic() <= self.until:
            plain = html.unescape(source)
            return plain if _parses(plain) else None
        return None


def _ranked(candidates: list[_Candidate]) -> list[_Candidate]:
    """Whole sketches, then fragments of one, then the rest; in each, js blocks last-first,
    then the other candidates longest-first."""

    def groups(pool: list[_Candidate]) -> list[_Candidate]:
        js = sorted((c for c in pool if c.js), key=lambda c: -c.order)
        rest = sorted((c for c in pool if not c.js), key=lambda c: -len(c.source))
        return js + rest

    whole = [c for c in candidates if _is_whole(c.source)]
    part = [c for c in candidates if _is_sketch(c.source) and c not in whole]
    other = [c for c in candidates if not _is_sketch(c.source)]
    return groups(whole) + groups(part) + (groups(other) if not whole and not part else [])


def _bare_code(text: str) -> str | None:
    """Bare unfenced code: from its first code line to its last, without the prose around it."""
    if not re.search(r"function\s+(setup|draw)\s*\(|\b(setup|draw)\s*=", text):
        return None
    lines = [_GLUED_CLOSE.sub("", _GLUED_OPEN.sub(r"\1", line)) for line in text.split("\n")]
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


def _fences_on_their_own_line(text: str) -> str:
    """ "Sure! ```js" opens a block too: a fence after text on its line starts a new line.
    (Found by the literal backticks: a scan from every character costs seconds on 3 MB.)"""
    out, last = [], 0
    for match in _BACKTICKS.finditer(text):
        before = text[last : match.start()]
        glued = before.rstrip(" \t")
        out.append(glued + "\n" if glued and glued[-1] != "\n" else before)
        out.append(match.group())
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def _text_candidates(text: str, start: int) -> list[_Candidate]:
    """The candidates in one text: its fenced blocks, or its bare code / inline scripts."""
    text = _fences_on_their_own_line(text)
    found: list[_Candidate] = []
    for tag, body, complete in _blocks(text):
        page = "<script" in body.lower() and body.lstrip().startswith("<")
        if tag in ("html", "htm", "xhtml") or page or (tag not in JS_TAGS and "<script" in body):
            script = _scripts(body)
            if script:
                found.append(_Candidate(script, False, start + len(found)))
        elif tag in JS_TAGS:
            found.append(_Candidate(body, complete, start + len(found)))
        elif tag in LOOSE_TAGS:
            found.append(_Candidate(body, False, start + len(found)))
    if not found and "```" not in text and "~~~" not in text:
        inline = _scripts(text) if "<script" in text.lower() else None
        bare = inline or _bare_code(text)
        if bare:
            found.append(_Candidate(bare, True, start))
    return found


def extract_program(reply: str | Reply, *, deadline_s: float = DEADLINE_S) -> str | None:
    """The sketch inside a model reply (its text, or a Reply read by refpool.core.reply), or
    None when there is no code to find (see above)."""
    if isinstance(reply, str):
        reply = read_message({"content": reply})
    texts = [reply.answer.replace("\r\n", "\n").replace("\r", "\n"), *reply.tool_texts]
    candidates: list[_Candidate] = []
    for text in texts:
        if text.strip():
            candidates.extend(_text_candidates(text, len(candidates)))
    unique = {c.source: c for c in candidates if c.source.strip()}  # the last copy's place
    if not unique:
        return None
    ranked = _ranked(list(unique.values()))
    checker = _Checker(deadline_s)
    for candidate in ranked:
        source = checker.parsed(candidate.source)
        if source is not None:
            return _finish(source)
    return _finish(max((c.source for c in ranked), key=len))
