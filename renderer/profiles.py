"""Gate profiles, the catalogue of violation codes and the globals a sketch may not touch.

A profile names the brush methods a sketch may call. p5's non-drawing helpers, and the
forbidden globals, are the same for every profile. Codes are stable: tools and models key
on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from refpool.core.errors import InputError


class ProfileError(InputError):
    """No gate profile of that name."""


# The reference prompt's allowlist: the brush methods its instructions name.
REFERENCE_BRUSH = (
    "scaleBrushes", "noStroke", "fill", "noFill", "fillBleed", "fillTexture",
    "beginShape", "vertex", "endShape", "circle",
)  # fmt: skip

# Every public drawing/state function of p5.brush 2.2.2 (the published run's permissive list
# was of this kind). Excludes runtime plumbing a sketch never needs: instance, load, add, clip.
PERMISSIVE_BRUSH = REFERENCE_BRUSH + (
    "addField", "arc", "beginStroke", "box", "endStroke", "field", "flowLine", "hatch",
    "hatchArray", "hatchStyle", "line", "listFields", "mass", "massArray", "move", "noClip",
    "noField", "noHatch", "noMass", "noWash", "noiseSeed", "pick", "polygon", "rect",
    "refreshField", "seed", "set", "spline", "stroke", "strokeWeight", "wRand", "wash", "wiggle",
)  # fmt: skip

# The watercolour env's gate (HuggingEnvs 02-watercolour, core/sketch_source.py KNOWN_CALLS):
# all 47 public names of its vendored p5.brush 2.2, plumbing included (load, instance, add,
# clip, box). What an env switched to refpool's renderer must accept.
ENV_BRUSH = PERMISSIVE_BRUSH + ("add", "clip", "instance", "load")
# p5.brush 2.2's built-in brushes and fields (what brush.box() and brush.listFields() list).
BUILTIN_BRUSHES = ("pen", "rotring", "2B", "HB", "2H", "cpencil", "charcoal", "spray", "marker")
BUILTIN_FIELDS = ("hand", "curved", "zigzag", "waves", "seabed", "spiral", "columns")

PAINTING_CALLS = (
    "endShape", "circle", "rect", "polygon", "spline", "line", "arc", "flowLine", "hatch",
    "endStroke",
)  # fmt: skip

# p5 helpers any profile may call: set-up, transforms, maths, colour, background, push/pop.
P5_HELPERS = (
    "createCanvas", "background", "clear", "angleMode", "noLoop", "loop", "isLooping",
    "redraw", "frameRate", "translate", "rotate", "rotateX", "rotateY", "rotateZ", "scale",
    "shearX", "shearY", "push", "pop", "resetMatrix", "random", "randomSeed", "randomGaussian",
    "noise", "noiseSeed", "noiseDetail", "map", "lerp", "constrain", "dist", "mag", "norm",
    "sq", "sqrt", "pow", "abs", "ceil", "floor", "round", "min", "max", "exp", "log", "sin",
    "cos", "tan", "asin", "acos", "atan", "atan2", "degrees", "radians", "fract", "color",
    "lerpColor", "paletteLerp", "red", "green", "blue", "alpha", "hue", "saturation",
    "brightness", "lightness", "colorMode", "fill", "noFill", "stroke", "noStroke", "strokeWeight",
    "createVector", "millis", "int", "float", "str", "boolean", "hex", "unhex", "nf", "nfc",
    "nfp", "nfs", "splitTokens", "shuffle", "print", "day", "hour", "minute",
    "month", "second", "year", "smooth", "noSmooth", "blendMode", "describe", "pixelDensity",
    "bezierPoint", "bezierTangent", "splinePoint", "splineTangent",
)  # fmt: skip
# Maths on curves: they compute numbers and draw nothing (bezierPoint is no primitive).
# p5 1.x's array/string helpers (split, join, trim, append, sort, reverse, concat, subset,
# splice, shorten) are gone from p5 2.x: a sketch uses JavaScript's own methods instead.

P5_PRIMITIVES = (
    "arc", "beginShape", "bezier", "bezierVertex", "circle", "curve", "curveVertex",
    "ellipse", "endShape", "line", "point", "quad", "quadraticVertex", "rect", "square",
    "triangle", "vertex", "plane", "box", "sphere", "cylinder", "cone", "ellipsoid",
    "torus", "image", "model", "splineVertex", "spline",
)  # fmt: skip

# Violation codes. Messages are written for a model revising its program.
CODES = {
    "empty_program": "The program is empty. Send a complete p5.js sketch in a ```js block.",
    "no_code_block": "No ```js code block was found in the reply. Put the whole sketch in one ```js block.",
    "syntax_error": "The sketch does not parse. Fix the syntax error at the given line.",
    "truncated": "The program looks cut off (unbalanced braces or brackets). Send the complete sketch.",
    "too_long": "The program is far longer than any sketch needs (a runaway reply?). Send a complete sketch of a few hundred lines.",
    "no_setup": "Define function setup() (and optionally draw()).",
    "no_webgl_canvas": "Call createCanvas(600, 600, WEBGL) in setup(); p5.brush needs a WEBGL canvas.",
    "canvas_size": "Use the fixed canvas size given in the prompt; do not resize the canvas.",
    "forbidden_api": "Network, DOM, storage, eval and timers are not allowed. Draw only with the brush API.",
    "text": "Text on the canvas is not allowed. Remove text(), textSize() and friends.",
    "p5_primitive": "Raw p5 drawing primitives are not allowed. Paint with brush.beginShape/vertex/endShape or brush.circle.",
    "p5_forbidden": "This p5 function is not allowed here. Use only transforms, maths, colour, background, push/pop.",
    "pixel_write": "Direct pixel access (loadPixels/updatePixels/set/pixels) is not allowed.",
    "offscreen_buffer": "createGraphics/createFramebuffer/shaders are not allowed. Paint directly with the brush API.",
    "raw_webgl": "drawingContext and raw WebGL calls are not allowed.",
    "unknown_brush_method": "This brush method is not on the allowlist for this profile.",
    "bad_argument": "Brush and p5 calls take numbers, strings (colours) or arrays of them only.",
    "async_sketch": "setup() and draw() must be synchronous; async, await, promises and timers are not allowed.",
    "no_painting": "The sketch never paints: call brush.endShape(...) or brush.circle(...) at least once.",
    "runtime_error": "The sketch threw an error while running. Fix the error at the given line.",
    "timeout": "The sketch did not finish within the time limit (an infinite loop or far too much work).",
    "crash": "The sketch crashed the page (often memory: huge arrays or runaway recursion).",
    "tamper": "The sketch changed one of JavaScript's built-ins (a method on a prototype, Math.random, a global such as Math), or sent the page calls it cannot check; an attempt counts even when it failed or was undone. Write helper functions of your own instead.",
    "blank_canvas": "The canvas is blank or a single flat colour. Paint a visible flower with brush fills.",
}


@dataclass(frozen=True)
class Profile:
    name: str
    brush_methods: tuple[str, ...]
    min_coverage: float = 0.005
    max_program_chars: int = 100_000  # honest sketches are a few KB, the largest ~20 KB


# `env`: what the watercolour env's gate accepts (its 47 p5.brush names): the default of the
# env-style interface and of serve-renderer. `reference`: the prompt's 10-method allowlist,
# the stricter choice for building a pool. `permissive`: p5.brush's drawing surface without
# the env's plumbing names.
PROFILES = {
    "reference": Profile("reference", REFERENCE_BRUSH),
    "permissive": Profile("permissive", PERMISSIVE_BRUSH),
    "env": Profile("env", ENV_BRUSH),
}


def get_profile(profile: str | Profile) -> Profile:
    """The profile of that name (a Profile is passed through). ProfileError if there is none."""
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise ProfileError(
            f"unknown gate profile {profile!r}; choose one of {', '.join(sorted(PROFILES))}",
            hint="choose a profile",
        ) from None


# Globals a sketch must never touch, with the code reported when it does. The page shadows
# each one with a parameter of the sketch's factory; at launch the renderer adds every other
# global the page has beyond JS's own and p5's (DOM constructors would lead back to
# `document`).
SHADOWED: tuple[tuple[str, str], ...] = tuple(
    (name, "forbidden_api")
    for name in (
        "document", "window", "globalThis", "self", "top", "parent", "frames", "opener",
        "navigator", "location", "history", "localStorage", "sessionStorage", "indexedDB",
        "caches", "fetch", "XMLHttpRequest", "WebSocket", "EventSource", "Worker",
        "SharedWorker", "importScripts", "Image", "OffscreenCanvas", "MessageChannel",
        "BroadcastChannel", "setTimeout", "setInterval", "requestAnimationFrame",
        "requestIdleCallback", "queueMicrotask", "Function", "WebAssembly",
        "open", "alert", "postMessage", "__refpoolDefine",
        "RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "createImageBitmap",
    )
) + (
    ("drawingContext", "raw_webgl"), ("canvas", "raw_webgl"), ("_renderer", "raw_webgl"),
    ("WebGLRenderingContext", "raw_webgl"), ("WebGL2RenderingContext", "raw_webgl"),
    ("pixels", "pixel_write"),
)  # fmt: skip


# --- the sketch realm (renderer/sketch_worker.js) and the painting page's replay ---------
# JavaScript's own globals: the only ones the sketch's Worker keeps (an allowlist).
INTRINSICS = (
    "Object", "Function", "Array", "Number", "parseFloat", "parseInt", "Infinity", "NaN",
    "undefined", "Boolean", "String", "Symbol", "Date", "RegExp", "Error", "AggregateError",
    "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError",
    "JSON", "Math", "Intl", "ArrayBuffer", "Uint8Array", "Int8Array", "Uint16Array",
    "Int16Array", "Uint32Array", "Int32Array", "Float32Array", "Float64Array",
    "Uint8ClampedArray", "BigUint64Array", "BigInt64Array", "DataView", "Map", "BigInt", "Set",
    "WeakMap", "WeakSet", "Proxy", "Reflect", "decodeURI", "decodeURIComponent", "encodeURI",
    "encodeURIComponent", "escape", "unescape", "isFinite", "isNaN", "Iterator", "Promise",
    "WeakRef", "FinalizationRegistry", "Atomics", "SharedArrayBuffer", "Float16Array",
    "globalThis",
)  # fmt: skip

# p5 calls that change what is painted: recorded in the sketch realm, replayed on the page.
REPLAYED_P5 = (
    "background", "clear", "angleMode", "colorMode", "translate", "rotate", "rotateX",
    "rotateY", "rotateZ", "scale", "shearX", "shearY", "push", "pop", "resetMatrix", "fill",
    "noFill", "stroke", "noStroke", "strokeWeight", "blendMode", "smooth", "noSmooth",
    "randomSeed", "noiseSeed",
)  # fmt: skip
COLOUR_METHODS = ("setAlpha", "setRed", "setGreen", "setBlue")  # p5.Color's setters
# brush calls that return a shape (brush.Plot / brush.Polygon; circle gives [plot, x, y]),
# and the shape methods p5.brush documents for reusing it.
GEOMETRY_CALLS = ("endShape", "polygon", "spline", "arc", "circle")
GEOMETRY_METHODS = ("draw", "fill", "wash", "hatch", "mass", "rotate", "show")
# What a custom brush's `tip(_m)` may draw on its tip surface (a p5.Graphics of p5.brush's):
# run in the sketch's realm at brush.add(), replayed on the real surface in the page. Shapes
# here paint a brush's tip, not the canvas, so p5's primitives are allowed on `_m`.
TIP_METHODS = (
    "push", "pop", "translate", "rotate", "scale", "shearX", "shearY", "fill", "noFill",
    "stroke", "noStroke", "strokeWeight", "strokeCap", "strokeJoin", "rectMode", "ellipseMode",
    "angleMode", "background", "clear", "rect", "square", "ellipse", "circle", "arc", "line",
    "point", "triangle", "quad", "beginShape", "vertex", "endShape",
)  # fmt: skip
MAX_TIP_CALLS = 2000
# A pressure curve given as a function is sampled at this many even steps over [0, 1].
PRESSURE_SAMPLES = 1025
# p5 1.x helpers gone from p5 2.x, with what to write instead.
REMOVED_HELPERS = (
    ("arrayCopy", "use array.slice()"),
    ("concat", "use a.concat(b)"), ("reverse", "use array.reverse()"),
    ("shorten", "use array.pop()"), ("sort", "use array.sort()"),
    ("splice", "use array.splice(index, 0, value)"), ("subset", "use array.slice(start, end)"),
    ("join", "use array.join(separator)"), ("split", "use string.split(separator)"),
    ("trim", "use string.trim()"), ("match", "use string.match(regexp)"),
    ("matchAll", "use string.matchAll(regexp)"),
    ("curvePoint", "use splinePoint(a, b, c, d, t)"),
    ("curveTangent", "use splineTangent(a, b, c, d, t)"),
)  # fmt: skip
MAX_CALLS = 200_000  # recorded calls per job, all frames together


def p5_call_code(name: str) -> str:
    """The gate's code for calling p5 function `name` ("helper" when it is allowed)."""
    if name in P5_HELPERS:
        return "helper"
    if name == "text" or name.startswith("text") or name == "loadFont":
        return "text"
    if name in P5_PRIMITIVES:
        return "p5_primitive"
    if name in ("loadPixels", "updatePixels", "set", "get", "copy", "blend"):
        return "pixel_write"
    offscreen = ("createGraphics", "createFramebuffer", "createShader", "shader", "loadShader",
                 "filter", "createFilterShader", "buildGeometry", "createImage", "beginGeometry")  # fmt: skip
    if name in offscreen or name.endswith("Shader"):
        return "offscreen_buffer"
    if name == "resizeCanvas":
        return "canvas_size"
    prefixes = ("load", "save", "http", "select", "create")
    others = ("getURL", "getURLPath", "getURLParams", "remove", "cursor", "fullscreen")
    if name.startswith(prefixes) or name in others:
        return "forbidden_api"
    return "p5_forbidden"
