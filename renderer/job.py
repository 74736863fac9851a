"""What one job hands the browser: the sketch realm's script and the painting page's spec.

The script is renderer/sketch_worker.js (a function expression) called with the realm's
config and the sketch wrapped in a strict function; it runs as a dedicated Worker. The spec
tells the painting page where that script is and which recorded calls it may replay.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from refpool.core.text import repair_text
from renderer.colour_names import css_colour_names
from renderer.env_rules import env_rule_of_names
from renderer.profiles import (
    BUILTIN_BRUSHES,
    BUILTIN_FIELDS,
    CODES,
    COLOUR_METHODS,
    ENV_BRUSH,
    GEOMETRY_CALLS,
    GEOMETRY_METHODS,
    INTRINSICS,
    MAX_CALLS,
    MAX_TIP_CALLS,
    PAINTING_CALLS,
    PRESSURE_SAMPLES,
    REMOVED_HELPERS,
    REPLAYED_P5,
    SHADOWED,
    TIP_METHODS,
    Profile,
    p5_call_code,
)

WORKER = Path(__file__).resolve().parent / "sketch_worker.js"
SEEDED_RANDOM = WORKER.with_name("seeded_random.js")  # the painting page uses the same file
INTEGRITY = WORKER.with_name("realm_integrity.js")  # the built-ins at boot, and every change
# Math.random values p5.brush 2.2.2 takes when it loads (its PRNG and noise seeds): the
# sketch's stream starts after them, as on the painting page.
BRUSH_LOAD_DRAWS = 4
_OWN = {*INTRINSICS, "console", "brush"}  # globals the realm keeps or provides itself


@cache
def _bootstrap() -> str:
    return WORKER.read_text(encoding="utf-8").rstrip()


@cache
def _seeded_random() -> str:
    return SEEDED_RANDOM.read_text(encoding="utf-8").rstrip()


@cache
def _integrity() -> str:
    return INTEGRITY.read_text(encoding="utf-8").rstrip()


def realm_config(
    profile: Profile,
    seed: int,
    *,
    script_url: str,
    size: tuple[int, int],
    max_frames: int,
    p5_facts: dict[str, Any],
) -> dict[str, Any]:
    """What the sketch realm's facade needs: the rules, the seed, p5's names and constants."""
    width, height = size
    return {
        # The env's page writes the seed into its script and takes `seed >>> 0`: the same
        # unsigned 32-bit value here (then seeded_random.js maps 0 to 1, as the env does).
        "seed": seed % 2**32,
        "scriptUrl": script_url,
        "prefixLines": 0,  # filled in by job_script
        "width": width,
        "height": height,
        "maxFrames": max_frames,
        "maxCalls": MAX_CALLS,
        "brushLoadDraws": BRUSH_LOAD_DRAWS,
        "intrinsics": list(INTRINSICS),
        "shadowed": {
            **{name: "forbidden_api" for name in p5_facts.get("globals", []) if name not in _OWN},
            **dict(SHADOWED),
        },
        "p5": {name: p5_call_code(name) for name in p5_facts.get("functions", [])},
        "constants": dict(p5_facts.get("constants", {})),
        "replayP5": list(REPLAYED_P5),
        "colourMethods": list(COLOUR_METHODS),
        "geometryCalls": list(GEOMETRY_CALLS),
        "geometryMethods": list(GEOMETRY_METHODS),
        "tipMethods": list(TIP_METHODS),
        "maxTipCalls": MAX_TIP_CALLS,
        "pressureSamples": PRESSURE_SAMPLES,
        "removedHelpers": [list(pair) for pair in REMOVED_HELPERS],
        "brushMethods": list(profile.brush_methods),
        "knownBrush": list(ENV_BRUSH),
        "paintingCalls": list(PAINTING_CALLS),
        "builtinBrushes": list(BUILTIN_BRUSHES),
        "builtinFields": list(BUILTIN_FIELDS),
        "namedColours": css_colour_names(),
        "codes": CODES,
        "envRules": env_rule_of_names(),
    }


def job_script(source: str, config: dict[str, Any]) -> tuple[bytes, int]:
    """The worker's script and how many lines come before the sketch's first line.

    The sketch's own block keeps its top-level names inside the function; the realm learns
    setup/draw from its return value. The page checks first that the sketch parses on its
    own, so it cannot close that function early.
    """
    head_before_config = _bootstrap() + "(\n"
    wrapper = ', function () { "use strict";\n{\n'
    probe = head_before_config + json.dumps({}) + wrapper
    prefix = probe.count("\n")
    config = {**config, "prefixLines": prefix}
    head = head_before_config + json.dumps(config, ensure_ascii=True) + wrapper
    assert head.count("\n") == prefix
    tail = (
        '\n;return { setup: typeof setup === "function" ? setup : undefined,'
        ' draw: typeof draw === "function" ? draw : undefined };\n}\n}, '
        + _seeded_random()
        + ", "
        + _integrity()
        + ");\n"
    )
    return (head + repair_text(source) + tail).encode("utf-8"), prefix


def page_spec(
    source: str,
    config: dict[str, Any],
    *,
    worker_url: str,
    prefix_lines: int,
    deadline_s: float,
    replay_budget_s: float | None = None,
    phase_token: str = "",
) -> dict[str, Any]:
    """The argument of the page's run(spec): the worker to start and what it may replay.

    Two budgets, one per realm: `deadlineMs` is the sketch's own (its worker recording its
    calls), `replayMs` the renderer's (replaying a checked call list and reading the canvas).
    The page logs `phaseToken` when the sketch's realm is done, so a page that dies after it
    is known to have died in the renderer's realm.
    """
    return {
        "seed": config["seed"],
        "source": source,  # parsed on its own first, so it cannot close the wrapper
        "workerUrl": worker_url,
        "prefixLines": prefix_lines,
        "deadlineMs": int(deadline_s * 1000),
        "replayMs": int((replay_budget_s or deadline_s) * 1000),
        "phaseToken": phase_token,
        "width": config["width"],
        "height": config["height"],
        "codes": CODES,
        "limits": {
            "maxFrames": config["maxFrames"],
            "maxCalls": config["maxCalls"],
            "paintingCalls": list(PAINTING_CALLS),
            "tipMethods": list(TIP_METHODS),
            "maxTipCalls": MAX_TIP_CALLS,
            "pressureSamples": PRESSURE_SAMPLES,
            "names": {
                "canvas": ["createCanvas"],
                "p5": list(REPLAYED_P5),
                "color": ["color", "lerpColor"],
                "colour": list(COLOUR_METHODS),
                "brush": config["brushMethods"],
                "geometry": list(GEOMETRY_METHODS),
            },
        },
    }
