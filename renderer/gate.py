"""The gate's static first pass and its pixel check.

The static pass reads acorn's AST (renderer/jsfacts.py) and catches the obvious; the page
enforces the same rules at run time (harness.js), so aliasing or building names at run
time does not get past the gate. A name the sketch declares itself (a helper called
`loadPalette`, a method called `line`) is the sketch's own and never refused.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image

from refpool.core.contracts import Violation
from refpool.core.defaults import GATE_PROFILE
from renderer.env_rules import ENV_KNOWN_CALLS, env_rule_violations
from renderer.jsfacts import MAX_SOURCE_CHARS, ParseError, StaticPassTimeout, js_facts
from renderer.profiles import (
    CODES,
    PAINTING_CALLS,
    SHADOWED,
    Profile,
    get_profile,
    p5_call_code,
)

# Globals a sketch may not name (beyond the page's own, which the run-time gate shadows).
_FORBIDDEN_NAMES = {name: code for name, code in SHADOWED}
_FORBIDDEN_NAMES.update({"eval": "forbidden_api", "importScripts": "forbidden_api"})
_FORBIDDEN_NAMES.update({"drawingContext": "raw_webgl"})  # awaiting is honest in the realm
_FORBIDDEN_NAMES.pop("brush", None)
_CREATE_OK = {"createCanvas", "createVector"}
_NO_SUCH_METHOD = "does not exist in p5.brush (`unknown_brush_method` in the env's gate)"
_REFUSED_HINTS = {
    "pixel_write": "read and write colours with the brush API instead",
    "offscreen_buffer": "paint directly on the main canvas with the brush API",
    "text": "draw letter shapes with brush.beginShape/vertex/endShape if you need them",
}


def _call_code(name: str) -> str | None:
    """The code a call of an undeclared p5 name earns: the run-time rule (p5_call_code), minus
    what the static pass cannot tell from a user's own function (unknown names pass here)."""
    if name in _CREATE_OK:
        return None
    code = p5_call_code(name)
    return None if code in ("helper", "p5_forbidden") else code


def _static_facts(source: str) -> list[Violation] | dict[str, Any]:
    try:
        found = js_facts(source)
    except StaticPassTimeout as exc:
        message = f"{CODES['timeout']} ({exc}: send a shorter program)"
        return [Violation("timeout", message)]
    if isinstance(found, ParseError):
        if found.at_end:
            return [Violation("truncated", f"{CODES['truncated']} ({found.message})", found.line)]
        where = f" (line {found.line}, column {found.column})" if found.line else ""
        message = f"SyntaxError: {found.message}{where}. {CODES['syntax_error']}"
        return [Violation("syntax_error", message, found.line)]
    return found


def static_check(source: str | None, profile: str | Profile = GATE_PROFILE) -> list[Violation]:
    """Violations visible in the source text alone (empty list: go on to render).

    `profile` is a resolved Profile, or the name of one. Works on acorn's AST (comments,
    strings, templates and regex literals are never mistaken for code) and reports every
    distinct violation once, with the line of its first occurrence.
    """
    prof = get_profile(profile)
    if source is None or not source.strip():
        return [Violation("empty_program", CODES["empty_program"])]
    if "\x00" in source:
        return [
            Violation("syntax_error", "The program contains NUL bytes: it is not JavaScript text.")
        ]
    limit = min(prof.max_program_chars, MAX_SOURCE_CHARS)
    if len(source) > limit:
        message = f"{CODES['too_long']} (it is {len(source)} characters; the limit is {limit})"
        return [Violation("too_long", message)]
    facts = _static_facts(source)
    if isinstance(facts, list):
        return facts
    found: list[Violation] = []
    seen: dict[tuple[str, str], int] = {}  # (code, what it is about) -> where in `found`

    def add(code: str, key: str, message: str, line: int | None = None) -> None:
        if (code, key) not in seen:
            seen[(code, key)] = len(found)
            found.append(Violation(code, message, line))

    if not facts["hasSetup"]:
        add("no_setup", "", CODES["no_setup"])
    if not facts["webglCanvas"]:
        add("no_webgl_canvas", "", CODES["no_webgl_canvas"])
    declared = set(facts["declared"])
    for name, line in facts["refs"]:
        code = _FORBIDDEN_NAMES.get(name)
        if code and name not in declared:
            add(code, name, f"`{name}` is not allowed: {CODES[code]}", line)
    for name, line in facts["calls"]:
        code = _call_code(name)
        if code and name not in declared:
            hint = f" Instead, {_REFUSED_HINTS[code]}." if code in _REFUSED_HINTS else ""
            add(code, name, f"`{name}()` is not allowed: {CODES[code]}{hint}", line)
    if facts["dynamicImport"]:
        add("forbidden_api", "import", f"import() is not allowed: {CODES['forbidden_api']}")
    if facts["dataImage"]:
        message = "Embedded images (data:image/...) are not allowed: paint with the brush API."
        add("forbidden_api", "data:image", message, facts["dataImage"])

    allowed = set(prof.brush_methods)
    if "brush" not in declared:
        for method, line, _dynamic in facts["brush"]:
            if method is not None and method not in allowed:
                allowlist = ", ".join(prof.brush_methods)
                why = "is not allowed" if method in ENV_KNOWN_CALLS else _NO_SUCH_METHOD
                message = f"brush.{method}() {why}; use only {allowlist}"
                add("unknown_brush_method", method, message, line)
    # No painting call is named anywhere (on brush or an alias of it). A sketch whose only
    # painting calls were refused above has already been told what to fix.
    properties = set(facts["properties"])
    names_painting = bool(properties & set(PAINTING_CALLS)) or facts["computedMembers"] > 0
    if not names_painting:
        add("no_painting", "", CODES["no_painting"])
    _add_env_rules(source, found, seen)
    return found


def _add_env_rules(source: str, found: list[Violation], seen: dict[tuple[str, str], int]) -> None:
    """The env's own gate reads the text: whatever it refuses, we refuse too. Where our rules
    already said so, the message gains the env's name for the rule."""
    for rule, code, key, violation in env_rule_violations(source):
        at = seen.get((code, key))
        if at is None:
            seen[(code, key)] = len(found)
            found.append(violation)
        elif rule not in found[at].message:
            ours = found[at]
            found[at] = Violation(code, f"{ours.message} (the env's gate: `{rule}`)", ours.line)


def paint_mask(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(paint mask, ground colour) of an RGB image, by the published gate's rule.

    The ground is the most common colour (quantised to 4 bits per channel, averaged over its
    pixels); a pixel is paint when it lies more than 32 from the ground in RGB. The critic and
    the pool's features use this too, so "paint" means one thing everywhere. The arithmetic is
    the env's, in 32-bit floats and in its order: in 64 bits a pixel near the threshold could
    fall on the other side, and near the 0.005 floor that moves the verdict.
    """
    colours = np.asarray(rgb, dtype=np.float32)
    quant = colours.astype(np.uint16) >> 4
    keys = (quant[..., 0].astype(np.int64) << 8) | (quant[..., 1] << 4) | quant[..., 2]
    modal = keys == int(np.bincount(keys.ravel(), minlength=4096).argmax())
    ground = colours[modal].mean(axis=0)
    distance = np.sqrt(((colours - ground) ** 2).sum(axis=-1))
    return distance > PAINT_DISTANCE, ground


PAINT_DISTANCE = np.float32(32.0)


def measure_coverage(png: bytes) -> float:
    """Fraction of pixels that are paint, composited over white (see `paint_mask`)."""
    img: Image.Image = Image.open(io.BytesIO(png))
    if img.mode != "RGBA":
        img = img.convert("RGBA")
    white = Image.new("RGBA", img.size, (255, 255, 255, 255))
    rgb = np.asarray(Image.alpha_composite(white, img).convert("RGB"))
    return float(paint_mask(rgb)[0].mean())
