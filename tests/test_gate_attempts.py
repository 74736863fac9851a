"""Attempts are verdicts, in the real Chromium (issue 35).

A program that touches something forbidden is refused with the rule and its line, even when
the touch failed or the program caught our error and went on to paint an honest decoy: a
caught fetch, a planted bind, the Function constructor by any route, a built-in changed with
defineProperty. And one program and seed get one verdict at any load: the attempt is
recorded (and posted to the page) at the touch, before any deadline could pass.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from renderer import static_check

HERE = Path(__file__).parent
ATTEMPTS = sorted((HERE / "attempts").glob("*.js"))


def expected(path: Path) -> tuple[str, int]:
    found = re.match(r"// expect: (\w+) @(\d+)", path.read_text())
    assert found, path
    return found.group(1), int(found.group(2))


def render_batch(renderer, jobs: list[tuple[str, float, bool]]) -> list[Any]:
    """Render (source, deadline_s, skip_static) jobs at once on the shared warm browser."""

    async def everything() -> list[Any]:
        inner = renderer.renderer
        return await asyncio.gather(
            *(inner.render(src, seed=1, deadline_s=d, skip_static=k) for src, d, k in jobs)
        )

    return renderer._call(everything())


@pytest.fixture(scope="module")
def attempted(renderer) -> dict[str, Any]:
    results = render_batch(renderer, [(p.read_text(), 3, True) for p in ATTEMPTS])
    return {p.stem: r for p, r in zip(ATTEMPTS, results, strict=True)}


@pytest.mark.browser
@pytest.mark.parametrize("path", ATTEMPTS, ids=[p.stem for p in ATTEMPTS])
def test_an_attempt_is_refused_with_its_rule_and_line(attempted, path):
    """Each program attempts, catches or survives the failure, then paints an honest circle:
    that decoy was accepted before. Now the attempt is the verdict."""
    code, line = expected(path)
    result = attempted[path.stem]
    assert result.infra_error is None
    assert not result.accepted
    assert result.png is None
    assert (code, line) in [(v.code, v.line) for v in result.gate.violations], (
        result.gate.violations
    )


@pytest.mark.browser
def test_a_changed_built_in_is_named_and_the_fix_is_said(attempted):
    (bind,) = [v for v in attempted["planted_bind"].gate.violations if v.code == "tamper"]
    assert "Function.prototype.bind" in bind.message
    assert "helper function of your own" in bind.message
    (ctor,) = attempted["constructor_route"].gate.violations[:1]
    assert "Function constructor" in ctor.message and "write the code itself" in ctor.message


@pytest.mark.browser
def test_a_name_reached_where_text_cannot_see_it_is_refused_in_the_envs_words(attempted, renderer):
    """Text cannot see a function's constructor called, or a primitive named by a built
    string; our realm refuses both at run time and says which of the env's rules each one
    breaks, so a model learns one vocabulary."""
    (ctor,) = attempted["constructor_route"].gate.violations[:1]
    assert "gate refuses it too: external_access" in ctor.message
    ellipse = _with('translate(0, 0)["ell" + "ipse"](0, 0, 10, 10);')
    result = renderer.render(ellipse, seed=1, skip_static=True)
    (bare,) = [v for v in result.gate.violations if v.code == "p5_primitive"]
    assert "gate refuses it too: bare_primitives" in bare.message and bare.line == 10


# --- one verdict per program and seed, at any load --------------------------------------
def _deadline(path: Path, usual: float) -> float:
    """A program that never ends (a loop, a memory bomb) gets 2 s: its verdict is the same."""
    head = path.read_text().splitlines()[0]
    return 2.0 if path.stem.endswith("_hang") or re.search(r"timeout|crash", head) else usual


def _hostile_jobs() -> list[tuple[str, str, float, bool]]:
    """(name, source, deadline_s, skip_static) of every hostile program of the project."""
    jobs = []
    for p in sorted((HERE / "hostile").glob("*.js")):
        source = p.read_text()
        jobs.append((f"hostile/{p.stem}", source, _deadline(p, 5.0), "runtime-only" in source))
    for p in sorted((HERE / "escapes").glob("*.js")):
        source = p.read_text()
        if source.startswith("// expect:"):
            jobs.append((f"escapes/{p.stem}", source.replace("PORT", "9"), _deadline(p, 4.0), True))
    for p in ATTEMPTS:
        jobs.append((f"attempts/{p.stem}", p.read_text(), _deadline(p, 3.0), True))
    return jobs


def _verdict(result: Any) -> str:
    if result.infra_error:
        return "infra"
    if result.accepted:
        return "accepted"
    code = result.gate.violations[0].code
    # A memory bomb ends when the heap or the deadline runs out, whichever comes first: both
    # are its own resource verdict (tests/hostile/heap_blowup.js expects crash|timeout).
    return "crash|timeout" if code in ("crash", "timeout") else code


def _hog(seconds: float) -> subprocess.Popen:
    code = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass\n"
    return subprocess.Popen([sys.executable, "-c", code])


@pytest.mark.browser
def test_every_hostile_program_gets_one_verdict_at_rest_and_under_load(renderer):
    """The whole corpus three times, in one batch each: twice at rest, once beside CPU hogs.
    Under load, planted built-ins and caught attempts used to flip between `accepted` (the
    decoy) and `timeout`; now the code is the same each time."""
    jobs = _hostile_jobs()
    batch = [(src, deadline, skip) for _, src, deadline, skip in jobs]
    passes = [[_verdict(r) for r in render_batch(renderer, batch)] for _ in range(2)]
    hogs = [_hog(240) for _ in range(2)]
    try:
        passes.append([_verdict(r) for r in render_batch(renderer, batch)])
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    flips = [
        (name, *(p[i] for p in passes))
        for i, (name, *_rest) in enumerate(jobs)
        if len({p[i] for p in passes}) > 1
    ]
    assert flips == []
    attempts = [v for (name, *_), v in zip(jobs, passes[0], strict=True) if "attempts/" in name]
    assert "accepted" not in attempts


# --- the env's gate rules are static rules of ours ----------------------------------------
HONEST_BODY = """function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 120);
}
"""


def _with(line: str) -> str:
    return HONEST_BODY + line + "\n"


# (what the env's gate says, the source, our code, our line, a phrase of what to write instead)
ENV_REFUSES = [
    ("truncated", HONEST_BODY + 'const open = "{";\n', "truncated", None, "paired"),
    (
        "missing_entry_points",
        HONEST_BODY.replace("function setup() {", "const setup = async () => {").replace(
            "  noLoop();\n}", "  noLoop();\n};"
        ),
        "no_setup",
        None,
        "function setup()",
    ),
    (
        "not_webgl",
        HONEST_BODY.replace("createCanvas(600, 600, WEBGL)", "createCanvas(min(600, 700), 600, WEBGL)"),
        "no_webgl_canvas",
        2,
        "no parentheses inside",
    ),
    ("external_access", _with("function evaluateCurve(t) { return t; }"), "forbidden_api", 10, "rename `evaluateCurve`"),
    ("external_access", _with("function myFunction(t) { return t; }"), "forbidden_api", 10, "rename `myFunction`"),
    ("external_access", _with('const note = "set innerHTML later";'), "forbidden_api", 10, "brush API"),
    ("text_label", _with("// then text (a title) goes here"), "text", 10, "remove it"),
    ("bare_primitives", _with("function circle(x) { return x; }"), "p5_primitive", 10, "drawCircle"),
    (
        "bare_primitives",
        _with("class Petal {\n  line(r) {\n    return r;\n  }\n}"),
        "p5_primitive",
        11,
        "other names",
    ),
    ("unknown_brush_method", _with("function later() { brush.lineWidth(2); }"), "unknown_brush_method", 10, "use only"),
    (
        "no_painting_calls",
        HONEST_BODY.replace("  brush.noStroke();\n  brush.fill", "  const b = brush;\n  b.noStroke();\n  b.fill")
        .replace("  brush.circle", "  b.circle"),
        "no_painting",
        None,
        "by name",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    "rule,source,code,line,instead",
    ENV_REFUSES,
    ids=[f"{r[0]}-{i}" for i, r in enumerate(ENV_REFUSES)],
)
def test_what_the_envs_gate_refuses_we_refuse(rule, source, code, line, instead):
    """Each source here passes our AST rules but breaks a rule of the env's textual gate: we
    refuse it too, in the env's words, with the line and what to write instead."""
    assert static_check(HONEST_BODY) == []
    for profile in ("reference", "permissive"):
        found = [v for v in static_check(source, profile) if v.code == code]
        assert found, (profile, static_check(source, profile))
        assert any(rule in v.message for v in found), found
        assert any(v.line == line for v in found), found
        if instead:
            assert any(instead in v.message for v in found), found


def test_the_envs_text_rules_are_read_as_it_reads_them():
    """Comments are stripped the env's way (a commented-out fetch passes), but `text(` counts
    even in a comment, as the env reads it on the raw text; our own refusal of a name the
    env also refuses says the env's name for the rule."""
    assert static_check(_with("// fetch('x') was here\n/* eval(1) */")) == []
    (fetched,) = static_check(_with("function later() { fetch('x'); }"))
    assert fetched.line == 10 and "external_access" in fetched.message
    commented_text = static_check(_with("// text(1)"))
    assert [v.code for v in commented_text] == ["text"]


def test_the_coders_prompt_warns_of_every_text_rule_the_env_applies():
    """A model told only the allowlist names a helper `evaluatePetal` and loses a round to
    the env's substring rule; the prompt lists the rule's own strings, so none is left out."""
    from generators.coders import coder_system_prompt
    from renderer.env_rules import ENV_EXTERNAL_ACCESS

    prompt = coder_system_prompt()
    assert "$env_text_rules" not in prompt
    for name in ENV_EXTERNAL_ACCESS:
        assert f"`{name}`" in prompt, name
    # The prompt's own examples are right: the bad name is refused, the good one is not.
    assert [v.code for v in static_check(_with("function evaluatePetal(t) { return t; }"))] == [
        "forbidden_api"
    ]
    assert static_check(_with("function scorePetal(t) { return t; }")) == []
