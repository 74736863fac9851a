"""The gate's static first pass and its pixel check.

The static pass is cheap and catches the obvious; the page enforces the same rules at run
time (harness.js), so aliasing or building names at run time does not get past the gate.
"""

from __future__ import annotations

import io
import re

import numpy as np
from PIL import Image

from refpool.contracts import Violation
from renderer.profiles import CODES, P5_PRIMITIVES, PAINTING_CALLS, Profile, get_profile


def _blank_out(source: str) -> str:
    """Replace comments, strings and template literals with spaces, keeping line breaks.

    Regex literals are rare in sketches and are left as they are.
    """
    out = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        nxt = source[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = source.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and nxt == "*":
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", source[i:j]))
            i = j
        elif c in "'\"`":
            j = i + 1
            while j < n and source[j] != c:
                if source[j] == "\\":
                    j += 1
                elif source[j] == "\n" and c != "`":
                    break
                j += 1
            j = min(j + 1, n)
            # keep the quotes so `fill('#abc')` still looks like a call with an argument
            out.append(
                c
                + re.sub(r"[^\n]", " ", source[i + 1 : j - 1])
                + (source[j - 1] if j - 1 > i else "")
            )
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


_FORBIDDEN = re.compile(
    r"(?<![\w$.])(fetch|XMLHttpRequest|WebSocket|EventSource|eval|Function|importScripts|"
    r"document|window|globalThis|localStorage|sessionStorage|indexedDB|navigator|"
    r"setTimeout|setInterval|requestAnimationFrame|queueMicrotask|Worker|innerHTML|outerHTML|"
    r"drawingContext|createGraphics|createFramebuffer|loadPixels|updatePixels)\b(?!\s*:)"
    r"|(?<![\w$.])(load[A-Z]\w*|save\w*|import|createElement)\s*\("
)
_ASYNC = re.compile(r"(?<![\w$.])(async|await|Promise)\b|\.then\s*\(")
_TEXT = re.compile(r"(?<![\w$.])(text[A-Z]?\w*)\s*\(")
_PRIMITIVE = re.compile(r"(?<![\w$.])(" + "|".join(P5_PRIMITIVES) + r")\s*\(")
_BRUSH_CALL = re.compile(r"\bbrush\s*\.\s*([A-Za-z_$][\w$]*)")
_DEFINED = re.compile(r"function\s+([A-Za-z_$][\w$]*)|(?:const|let|var)\s+([A-Za-z_$][\w$]*)")
# Checked in this order; each reports its first match only.
_NAMED_RULES = (
    (_FORBIDDEN, "forbidden_api"),
    (_ASYNC, "async_sketch"),
    (_TEXT, "text"),
    (_PRIMITIVE, "p5_primitive"),
)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _bracket_violation(code: str) -> Violation | None:
    """Unclosed brackets mean a cut-off program; extra closers, a syntax error."""
    depth = {"{": 0, "(": 0, "[": 0}
    closers = {"}": "{", ")": "(", "]": "["}
    for ch in code:
        if ch in depth:
            depth[ch] += 1
        elif ch in closers:
            depth[closers[ch]] -= 1
    if any(v > 0 for v in depth.values()):
        return Violation("truncated", CODES["truncated"])
    if any(v < 0 for v in depth.values()):
        message = "There are more closing brackets than opening ones. Check the brackets."
        return Violation("syntax_error", message)
    return None


def static_check(source: str | None, profile: str | Profile = "reference") -> list[Violation]:
    """Violations visible in the source text alone (empty list: go on to render).

    `profile` is a resolved Profile, or the name of one.
    """
    prof = get_profile(profile)
    if source is None or not source.strip():
        return [Violation("empty_program", CODES["empty_program"])]
    if "\x00" in source:
        return [
            Violation("syntax_error", "The program contains NUL bytes: it is not JavaScript text.")
        ]
    code = _blank_out(source)
    found: list[Violation] = []

    def add(code_: str, message: str, index: int | None = None) -> None:
        found.append(
            Violation(code_, message, _line_of(code, index) if index is not None else None)
        )

    unbalanced = _bracket_violation(code)
    if unbalanced:
        found.append(unbalanced)

    if not re.search(r"function\s+setup\s*\(|\bsetup\s*=", code):
        add("no_setup", CODES["no_setup"])
    if not re.search(r"createCanvas\s*\([^;]*\bWEBGL\b", code):
        add("no_webgl_canvas", CODES["no_webgl_canvas"])

    user_defined = {a or b for a, b in _DEFINED.findall(code)}
    for pattern, code_ in _NAMED_RULES:
        for m in pattern.finditer(code):
            name = next((g for g in m.groups() if g), m.group(0))
            if code_ == "p5_primitive" and name in user_defined:
                continue  # the sketch's own helper named like a primitive
            add(code_, f"`{name}` is not allowed: {CODES[code_]}", m.start())
            break

    allowed = set(prof.brush_methods)
    painting = False
    for m in _BRUSH_CALL.finditer(code):
        method = m.group(1)
        if method not in allowed:
            allowlist = ", ".join(prof.brush_methods)
            message = f"brush.{method}() is not allowed; use only {allowlist}"
            add("unknown_brush_method", message, m.start())
            break
        painting = painting or method in PAINTING_CALLS
    if not painting:
        add("no_painting", CODES["no_painting"])
    if re.search(r"data:image/", source):
        add(
            "forbidden_api",
            "Embedded images (data:image/...) are not allowed: paint with the brush API.",
        )
    return found


def paint_mask(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(paint mask, ground colour) of an RGB image, by the published gate's rule.

    The ground is the most common colour (quantised to 4 bits per channel, averaged over its
    pixels); a pixel is paint when it lies more than 32 from the ground in RGB. The critic and
    the pool's features use this too, so "paint" means one thing everywhere.
    """
    flat = rgb.reshape(-1, 3).astype(np.int32)
    quant = flat >> 4
    keys = (quant[:, 0] << 8) | (quant[:, 1] << 4) | quant[:, 2]
    ground = flat[keys == int(np.bincount(keys, minlength=4096).argmax())].mean(axis=0)
    distance = np.sqrt(((flat - ground) ** 2).sum(axis=1))
    return (distance > PAINT_DISTANCE).reshape(rgb.shape[:-1]), ground


PAINT_DISTANCE = 32


def measure_coverage(png: bytes) -> float:
    """Fraction of pixels that are paint, composited over white (see `paint_mask`)."""
    img: Image.Image = Image.open(io.BytesIO(png))
    if img.mode != "RGBA":
        img = img.convert("RGBA")
    white = Image.new("RGBA", img.size, (255, 255, 255, 255))
    rgb = np.asarray(Image.alpha_composite(white, img).convert("RGB"))
    return float(paint_mask(rgb)[0].mean())
