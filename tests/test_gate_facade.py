"""Honest p5 works: what p5 2.x and p5.brush 2.2 answer a painting program, the realm answers.

Colour channels, p5.Vector's statics, curve maths and `brush.addField(name, fn)` used to be
refused (as `p5_forbidden`, `p5_primitive` or `bad_argument`): the facade's limits charged to
the program. The env's gate accepts them, and so must the `env` profile, which is now the
default of the env-style interface and of `serve-renderer`.
"""

from __future__ import annotations

import asyncio
import io

import numpy as np
from PIL import Image

from refpool.cli import build_parser
from renderer.env_api import EnvRenderer, RemoteEnvRenderer
from renderer.gate import static_check
from renderer.profiles import get_profile

# The watercolour env's gate: core/sketch_source.py's KNOWN_CALLS (PAINTING | SUPPORTING).
ENV_KNOWN_CALLS = {
    "arc", "box", "circle", "endShape", "endStroke", "flowLine", "hatch", "hatchArray", "line",
    "polygon", "rect", "spline", "wash", "add", "addField", "beginShape", "beginStroke", "clip",
    "field", "fill", "fillBleed", "fillTexture", "hatchStyle", "instance", "listFields", "load",
    "mass", "massArray", "move", "noClip", "noField", "noFill", "noHatch", "noMass", "noStroke",
    "noWash", "noiseSeed", "pick", "refreshField", "scaleBrushes", "seed", "set", "stroke",
    "strokeWeight", "vertex", "wRand", "wiggle",
}  # fmt: skip

ANSWERS = """
function setup() {
  createCanvas(600, 600, WEBGL);
  background("#fffaf0");
  const c = color(200, 100, 50, 128);
  console.log("rgb", red(c), green(c), blue(c), alpha(c), Math.round(hue(c)),
    Math.round(saturation(c)), brightness(c).toFixed(2), lightness(c).toFixed(2));
  console.log("strings", red("#ff8000"), hue("#ff8000").toFixed(2), alpha("#ff800080"),
    red([10, 20, 30]), red("seagreen"));
  colorMode(HSB);
  const k = color(200, 50, 80, 0.5);
  console.log("hsb", red(k), Math.round(green(k)), blue(k), alpha(k), hue(k));
  colorMode(RGB);
  const v = p5.Vector.add(createVector(1, 2), createVector(3, 4));
  console.log("vector", v.x, v.y, p5.Vector.sub(v, [1, 1]).x, p5.Vector.mult(v, 2).y,
    p5.Vector.dot(v, createVector(1, 0)), p5.Vector.mag(createVector(3, 4)),
    p5.Vector.random2D().mag().toFixed(3), p5.Vector.fromAngle(0, 2).x,
    p5.Vector.normalize(createVector(0, 5)).y, p5.Vector.lerp(v, createVector(0, 0), 0.5).x);
  console.log("curves", bezierPoint(0, 10, 20, 30, 0.5), bezierTangent(0, 10, 20, 30, 0.5),
    splinePoint(0, 10, 20, 30, 0.5), splineTangent(0, 10, 20, 30, 0.5));
  console.log("brush", brush.listFields().join(","), brush.box().length);
  brush.noStroke();
  brush.fill(color(hue(c), 80, 60), 160);
  brush.circle(0, 0, 120);
}
"""

# The numbers p5 2.3.2 itself gives for the same calls (measured in a page running p5).
EXPECTED = {
    "rgb": "rgb 200 100 50 128 20 60 78.43 49.02",
    "strings": "strings 255 30.12 128 10 46",
    "hsb": "hsb 102 170 204 0.5 200",
    "vector": "vector 4 6 3 12 4 5 1.000 2 1 2",
    "curves": "curves 15 30 15 10",
    "brush": "brush hand,curved,zigzag,waves,seabed,spiral,columns 9",
}

FIELD = """
function setup() {
  createCanvas(600, 600, WEBGL);
  angleMode(DEGREES);
  background("#fbf6ec");
  brush.addField("eddy", (t, field) => {
    for (let c = 0; c < field.length; c++)
      for (let r = 0; r < field[0].length; r++)
        field[c][r] = 70 * sin(c * 4 + r * 3 + t * 40);
    return field;
  });
  brush.field("eddy");
  brush.set("HB", "#24405c", 2);
  for (let i = 0; i < 8; i++) brush.flowLine(-250, -200 + i * 50, 500, 0);
  brush.refreshField(2);
  for (let i = 0; i < 4; i++) brush.flowLine(-200, -180 + i * 100, 400, 0);
  brush.noField();
}
"""


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def test_the_env_profile_is_the_envs_gate_and_the_env_interfaces_default():
    assert set(get_profile("env").brush_methods) == ENV_KNOWN_CALLS
    assert len(get_profile("reference").brush_methods) == 10  # the stricter pool-building gate
    assert EnvRenderer().profile == "env"
    assert RemoteEnvRenderer("http://127.0.0.1:9").profile == "env"
    args = build_parser().parse_args(["serve-renderer"])
    assert args.profile == "env"
    assert build_parser().parse_args(["render", "x.js"]).profile == "reference"


def test_maths_that_draws_nothing_is_no_primitive():
    source = (
        "function setup() { createCanvas(600, 600, WEBGL);\n"
        "  const x = bezierPoint(0, 1, 2, 3, 0.5) + bezierTangent(0, 1, 2, 3, 0.5)\n"
        "    + splinePoint(0, 1, 2, 3, 0.5) + splineTangent(0, 1, 2, 3, 0.5);\n"
        "  brush.fill('#336699', 120); brush.circle(x, 0, 50); }\n"
    )
    for profile in ("env", "reference"):
        assert static_check(source, profile) == []


def test_colour_channels_vectors_and_curves_are_answered_as_p5_answers(renderer):
    result = renderer.render(ANSWERS, seed=0, profile="env")
    assert result.accepted, result.gate.violations
    logged = {
        line.split(": ", 1)[1].split(" ", 1)[0]: line.split(": ", 1)[1] for line in result.console
    }
    assert {k: logged.get(k) for k in EXPECTED} == EXPECTED
    assert result.gate.coverage > 0.005


def test_a_flow_field_from_a_function_is_painted_with_its_grid(renderer):
    with_field = renderer.render(FIELD, seed=3, profile="env")
    assert with_field.accepted, with_field.gate.violations
    flat = FIELD.replace("70 * sin(c * 4 + r * 3 + t * 40)", "0")
    without = renderer.render(flat, seed=3, profile="env")
    assert without.accepted, without.gate.violations
    assert with_field.png is not None and without.png is not None
    # The same strokes bent by the sketch's own field: far apart, not a few edge pixels.
    changed = (np.abs(_pixels(with_field.png) - _pixels(without.png)).sum(axis=-1) > 30).sum()
    assert changed > 2000


def test_the_env_interface_accepts_what_only_the_envs_method_list_allows(renderer):
    source = (
        "function setup() { createCanvas(600, 600, WEBGL); background('#fff');\n"
        "  brush.load(); brush.set('2B', '#333', 2); brush.line(-200, 0, 200, 40);\n"
        "  brush.noStroke(); brush.fill('#c66', 150); brush.rect(-100, -100, 200, 150); }\n"
    )
    env = asyncio.run(EnvRenderer(renderer=renderer).render(source, 0))
    assert env.accepted and env.paint_fraction > 0.005, env.errors
    strict = asyncio.run(EnvRenderer(renderer=renderer, profile="reference").render(source, 0))
    assert not strict.accepted
    assert {v["code"] for v in strict.violations} == {"unknown_brush_method"}


CUSTOM = """
function setup() {
  createCanvas(600, 600, WEBGL);
  background("#fffaf3");
  brush.add("stamp", {
    type: "custom", weight: 2, scatter: 0.3, opacity: 120, spacing: 0.5,
    pressure: { type: "custom", curve: (x) => 0.3 + x * x, min_max: [0.6, 1.4] },
    tip: (_m) => { _m.noStroke(); _m.fill(20); _m.rotate(0.7); _m.rect(-8, -3, 16, 6); },
  });
  brush.set("stamp", "#3f7d4e", 12);
  for (let i = 0; i < 4; i++) brush.line(-200, -150 + i * 90, 200, -110 + i * 90);
}
"""


def test_a_custom_brush_tip_and_pressure_function_paint_as_the_sketch_wrote_them(renderer):
    """A tip drawn by a function and a pressure curve given as one were `bad_argument`: the
    facade's limit charged to the program. The tip's calls are recorded in the sketch's realm
    and drawn again on p5.brush's tip surface; the curve is sampled. Another tip paints
    another picture, so the tip is really used."""
    result = renderer.render(CUSTOM, seed=2, profile="env")
    assert result.accepted, result.gate.violations
    round_tip = CUSTOM.replace("_m.rect(-8, -3, 16, 6)", "_m.circle(0, 0, 6)")
    other = renderer.render(round_tip, seed=2, profile="env")
    assert other.accepted and not np.array_equal(_pixels(other.png), _pixels(result.png))


def test_a_tip_that_reaches_past_its_surface_or_a_curve_that_is_not_a_number_is_refused(
    renderer,
):
    reach = CUSTOM.replace("_m.noStroke();", "_m.image(0, 0, 0);")
    image = renderer.render(reach, seed=2, profile="env")
    (code,) = {v.code for v in image.gate.violations}
    assert code == "bad_argument" and any(
        "a tip may draw with" in v.message for v in image.gate.violations
    )
    nan = renderer.render(CUSTOM.replace("0.3 + x * x", "x > 0.5 ? NaN : 1"), seed=2, profile="env")
    (bad,) = [v for v in nan.gate.violations if v.code == "bad_argument"]
    assert "pressure curve" in bad.message and "stamp" in bad.message


def test_an_image_brush_is_refused_as_the_request_it_makes(renderer):
    """An "image" brush's tip is fetched from a URL: charged to the program as the request it
    is, with its line, not as the runtime error its failed load caused in the page."""
    fetched = CUSTOM.replace(
        'type: "custom"', 'type: "image", image: { src: "https://example.com/t.png" }'
    )
    result = renderer.render(fetched, seed=2, profile="env")
    assert [(v.code, v.line) for v in result.gate.violations] == [("forbidden_api", 5)]
    assert 'type: "custom"' in result.gate.violations[0].message


def test_a_tip_that_plants_a_method_the_recorder_calls_is_tamper_at_once(renderer):
    """A tip is the sketch's code run inside brush.add: a method it plants is found before
    the recorder takes the tip's next call, so the verdict is tamper, not a timeout."""
    planted = CUSTOM.replace(
        "_m.noStroke();",
        "WeakMap.prototype.has = function () { for (;;) {} }; _m.fill([30, 30, 30]);",
    )
    result = renderer.render(planted, seed=2, profile="env", deadline_s=10)
    assert [(v.code, v.line) for v in result.gate.violations][:1] == [("tamper", 8)]
