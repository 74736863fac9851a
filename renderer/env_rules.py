"""The watercolour env's own gate rules, read the way the env reads them: as text.

The env (HuggingEnvs 02-watercolour, `core/sketch_source.py` and `core/gate.py`) refuses a
source before rendering it when the *text* shows a cut-off reply, no `setup`, no WEBGL in
`createCanvas(...)`, a name that reaches outside (`fetch`, `eval`, `Function(`, `load*`...),
`text(`, a bare p5 primitive, a `brush.` method p5.brush lacks, or no painting call on
`brush`. A source the env refuses must never be in one of our releases, so each of those
rules is also ours, with the env's exact predicate: substrings and all, comments stripped
the env's way. Our AST rules (renderer/gate.py) say more precisely what is wrong; these
make sure we are never more lenient. The messages name the env's rule and what to write.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from refpool.core.contracts import Violation
from renderer.profiles import ENV_BRUSH

# p5.brush's public surface as the env lists it (the export table of its vendored bundle):
# the `env` profile's method list (renderer/profiles.py), split by what paints.
ENV_KNOWN_CALLS = frozenset(ENV_BRUSH)
ENV_PAINTING_CALLS = frozenset({
    "arc", "box", "circle", "endShape", "endStroke", "flowLine", "hatch", "hatchArray",
    "line", "polygon", "rect", "spline", "wash",
})  # fmt: skip
assert ENV_PAINTING_CALLS <= ENV_KNOWN_CALLS
ENV_BARE_PRIMITIVES = (
    "arc", "beginShape", "bezier", "circle", "curve", "ellipse", "line", "point", "quad",
    "rect", "square", "triangle", "vertex",
)  # fmt: skip
ENV_EXTERNAL_ACCESS = (
    "loadImage", "loadBytes", "loadJSON", "loadStrings", "loadTable", "loadXML", "loadModel",
    "loadFont", "loadShader", "createImg", "createVideo", "createCapture", "fetch",
    "XMLHttpRequest", "WebSocket", "EventSource", "importScripts", "createElement",
    "innerHTML", "document.write", "eval", "Function(",
)  # fmt: skip


def env_rule_of_names() -> dict[str, str]:
    """The env's rule for each global name its text rules refuse: what the sketch realm's
    run-time refusals name, so a name reached where text cannot see it (`globalThis["fe" +
    "tch"]`) is refused in the env's words too."""
    rules = {name: "bare_primitives" for name in ENV_BARE_PRIMITIVES}
    rules["text"] = "text_label"
    for entry in ENV_EXTERNAL_ACCESS:
        if entry.rstrip("(").isidentifier():
            rules[entry.rstrip("(")] = "external_access"
    return rules


_HAS_SETUP = re.compile(r"function\s+setup\s*\(|setup\s*=\s*(?:function|\()")
_BRUSH_CALL = re.compile(r"\bbrush\s*\.\s*([A-Za-z_$][\w$]*)")
_CREATE_CANVAS = re.compile(r"\bcreateCanvas\s*\(([^)]*)\)")
_TEXT_CALL = re.compile(r"(^|[^.\w])text\s*\(")
_DATA_URI = re.compile(r"data\s*:\s*image/", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def _strip_comments(source: str) -> tuple[str, list[int]]:
    """The env's comment stripping (block comments, then line comments, each replaced by a
    space), with where each remaining character was in `source` (for line numbers)."""
    text, where = source, list(range(len(source)))
    for pattern, flags in ((r"/\*.*?\*/", re.S), (r"//[^\n]*", 0)):
        parts: list[str] = []
        places: list[int] = []
        last = 0
        for m in re.finditer(pattern, text, flags):
            parts += [text[last : m.start()], " "]
            places += [*where[last : m.start()], where[m.start()]]
            last = m.end()
        parts.append(text[last:])
        places += where[last:]
        text, where = "".join(parts), places
    return text, where


def _line(source: str, index: int) -> int:
    return source.count("\n", 0, index) + 1


def _word_around(code: str, start: int, end: int) -> str:
    """The whole identifier a substring sits in (`eval` in `evaluateCurve`)."""
    for m in _WORD.finditer(code, max(0, start - 60), min(len(code), end + 60)):
        if m.start() <= start and end <= m.end():
            return m.group(0)
    return code[start:end]


def _external(name: str, word: str) -> str:
    if word != name.rstrip("(") and name != "document.write":
        return (
            f"rename `{word}` so that it does not contain `{name}` (the env's gate refuses "
            "the text wherever it appears, inside longer names, strings and all)"
        )
    if name.startswith(("load", "create")) or name in ("innerHTML", "document.write"):
        return "paint everything with the brush API; nothing may be loaded or added to the page"
    if name in ("eval", "Function("):
        return "write the code itself; code built from strings is not allowed"
    return "remove it: a sketch may not reach the network"


def env_rule_violations(source: str) -> Iterator[tuple[str, str, str, Violation]]:
    """(the env's rule, our code, key, violation) for each env gate rule the source breaks.

    The key is the name the rule is about ("" for whole-program rules), so a caller can
    merge what its own rules already reported. Predicates are the env's, unchanged.
    """
    code, where = _strip_comments(source)

    def line_at(index: int) -> int | None:
        return _line(source, where[index]) if 0 <= index < len(where) else None

    opened, closed = source.count("{"), source.count("}")
    if opened != closed:
        message = (
            f"The env's gate reads this program as cut off (`truncated`): the whole text, "
            f"strings and comments included, has {opened} `{{` and {closed} `}}`. Send the "
            "complete sketch, and keep any braces inside strings or comments paired."
        )
        yield "truncated", "truncated", "", Violation("truncated", message)
    if not _HAS_SETUP.search(source):
        message = (
            "The env's gate finds no `function setup(` and no `setup = function` or "
            "`setup = (` (`missing_entry_points`). Write `function setup() { ... }`."
        )
        yield "missing_entry_points", "no_setup", "", Violation("no_setup", message)
    canvas = _CREATE_CANVAS.search(code)
    if not (canvas and "WEBGL" in canvas.group(1)):
        at = line_at(canvas.start()) if canvas else None
        message = (
            "The env's gate reads the first `createCanvas(` up to its first `)` and needs "
            "WEBGL there (`not_webgl`). Write `createCanvas(600, 600, WEBGL)` with no "
            "parentheses inside the call."
        )
        yield "not_webgl", "no_webgl_canvas", "", Violation("no_webgl_canvas", message, at)
    for name in ENV_EXTERNAL_ACCESS:
        at = code.find(name)
        if at >= 0:
            word = _word_around(code, at, at + len(name.rstrip("(")))
            message = (
                f"`{name}` appears in the code (`external_access` in the env's gate): "
                f"{_external(name, word)}."
            )
            key = name.rstrip("(")
            yield (
                "external_access",
                "forbidden_api",
                key,
                Violation("forbidden_api", message, line_at(at)),
            )
    image = _DATA_URI.search(code)
    if image:
        message = (
            "An embedded image (`data:image/...`) is `external_access` in the env's gate: "
            "paint with the brush API instead."
        )
        yield (
            "external_access",
            "forbidden_api",
            "data:image",
            Violation("forbidden_api", message, line_at(image.start())),
        )
    text = _TEXT_CALL.search(source)  # the env reads the raw text here, comments included
    if text:
        message = (
            "`text(` is a text label in the env's gate (`text_label`), even in a comment or as "
            "the name of your own function: remove it, and draw any letter shapes with "
            "brush.beginShape()/brush.vertex()/brush.endShape()."
        )
        yield (
            "text_label",
            "text",
            "text",
            Violation("text", message, _line(source, text.end() - 1)),
        )
    for name in ENV_BARE_PRIMITIVES:
        bare = re.search(rf"(^|[^.\w]){name}\s*\(", code, re.MULTILINE)
        if bare:
            message = (
                f"`{name}(` not right after a dot is a bare p5 primitive in the env's gate "
                f"(`bare_primitives`), your own functions and methods named `{name}` "
                f"included: paint with brush.{name if name in ENV_KNOWN_CALLS else 'endShape'}"
                f"(...) and give your own helpers other names (e.g. `draw{name[0].upper()}"
                f"{name[1:]}`)."
            )
            yield (
                "bare_primitives",
                "p5_primitive",
                name,
                Violation("p5_primitive", message, line_at(bare.end() - 1)),
            )
    used: dict[str, int] = {}
    for m in _BRUSH_CALL.finditer(code):
        used.setdefault(m.group(1), m.start())
    for method, at in used.items():
        if method not in ENV_KNOWN_CALLS:
            message = (
                f"brush.{method} does not exist in p5.brush (`unknown_brush_method` in the "
                "env's gate): use one of its documented methods."
            )
            yield (
                "unknown_brush_method",
                "unknown_brush_method",
                method,
                Violation("unknown_brush_method", message, line_at(at)),
            )
    if not set(used) & ENV_PAINTING_CALLS:
        message = (
            "The env's gate finds no painting call on `brush` in the text "
            "(`no_painting_calls`): call brush.circle(...), brush.endShape(), brush.rect(...) "
            "and the like on `brush` by name, not only through another variable."
        )
        yield "no_painting_calls", "no_painting", "", Violation("no_painting", message)
