"""The gate's surroundings: the render cache, text from sketches, the static pass, pixels.

Run as the outside party does: `refpool render` in a subprocess, reading its stdout as bytes.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

HERE = Path(__file__).parent
YELLOW = HERE / "sketches" / "yellow_hibiscus.js"
TRIVIAL = HERE / "sketches" / "trivial.js"
REFPOOL = [sys.executable, "-c", "import sys; from refpool.cli import main; sys.exit(main())"]

SURROGATE_SKETCH = r"""
function setup() {
  createCanvas(600, 600, WEBGL);
  console.log("a lone \ud800 surrogate");
  brush.noStroke();
  throw new Error("broken \ud800 message");
  brush.circle(300, 300, 50);
}
"""


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Bytes out: the test decodes them itself, strictly, as a reader of the output would."""
    strict = {"PYTHONIOENCODING": "utf-8:strict", "PYTHONUTF8": "1"}
    return subprocess.run(
        [*REFPOOL, *args],
        capture_output=True,
        timeout=300,
        env={**os.environ, **strict, **(env or {})},
    )


def json_rows(proc: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]


def all_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*all_strings(k), *all_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in all_strings(v)]
    return []


def cache_entries(home: Path) -> list[Path]:
    return sorted((home / "render-cache").glob("*/*.json"))


# -- the render cache -------------------------------------------------------------------------
@pytest.mark.browser
def test_a_short_budget_is_never_cached_nor_replayed_to_a_longer_one(refpool_home):
    """Yellow's worker records its calls in milliseconds; replaying them outlasts 0.5 s. That
    is the renderer's realm running out: infra (exit 3), not a verdict, and nothing cached."""
    short = run_cli("render", str(YELLOW), "--json", "--deadline", "0.5")
    assert short.returncode == 3, short.stderr.decode()
    [row] = json_rows(short)
    assert row["violations"] == [] and "replaying" in row["infra_error"], row
    assert cache_entries(refpool_home) == []  # an outcome load decided is not kept

    full = run_cli("render", str(YELLOW), "--json")
    [row] = json_rows(full)
    assert full.returncode == 0 and row["accepted"] and not row["cached"], row
    again = run_cli("render", str(YELLOW), "--json")
    [row] = json_rows(again)
    assert row["accepted"] and row["cached"]  # an honest verdict is kept and replayed
    assert len(cache_entries(refpool_home)) == 1


def _render(code: str, infra_error: str | None = None):
    from refpool.core.contracts import GateResult, Render, Violation

    gate = GateResult(False, [Violation(code, f"{code} happened")])
    return Render("p" * 64, 0, 600, 600, gate, cache_key=code * 8, infra_error=infra_error)


def test_timeouts_crashes_and_our_failures_are_never_cached(tmp_path):
    from renderer.cache import RenderCache

    cache = RenderCache(tmp_path / "cache")
    for result in (_render("timeout"), _render("crash"), _render("x", infra_error="browser died")):
        cache.put(result)
        assert cache.get(result.cache_key) is None
    assert list((tmp_path / "cache").glob("**/*.json")) == []
    kept = _render("p5_primitive")  # a verdict about the program alone is kept
    cache.put(kept)
    assert cache.get(kept.cache_key) is not None


def test_a_stale_timeout_entry_is_not_replayed(tmp_path):
    """An entry a former version wrote for a timeout is ignored, not served."""
    from renderer.cache import RenderCache

    result = _render("timeout")
    path = tmp_path / "cache" / result.cache_key[:2] / f"{result.cache_key}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(result.to_dict()))
    assert RenderCache(tmp_path / "cache").get(result.cache_key) is None


def test_the_cache_key_holds_the_deadline_and_the_worker_scripts():
    from renderer import cache

    args = dict(size=(600, 600), lib_versions={"p5": "2.3.2"}, profile="p", max_frames=60)
    assert cache.cache_key("x", 1, deadline_s=0.5, **args) != cache.cache_key(
        "x", 1, deadline_s=30, **args
    )
    scripts = {p.name for p in (Path(cache.__file__).parent).glob("*.js")}
    assert scripts <= set(cache._GATE_FILES) and "static_pass.js" in scripts


# -- text from sketches -----------------------------------------------------------------------
@pytest.mark.browser
def test_lone_surrogates_from_a_sketch_survive_text_and_json_output(tmp_path, refpool_home):
    sketch = tmp_path / "surrogate.js"
    sketch.write_text(SURROGATE_SKETCH)

    text = run_cli("render", str(sketch))
    assert text.returncode == 1, text.stderr.decode("utf-8", "replace")  # a normal rejection
    out, err = text.stdout.decode("utf-8"), text.stderr.decode("utf-8")
    assert "Traceback" not in err and out.startswith("rejected")
    assert "runtime_error" in out

    data = run_cli("render", str(sketch), "--json", "--no-cache")
    assert data.returncode == 1
    [row] = json_rows(data)
    [why] = row["violations"]
    assert why["code"] == "runtime_error" and "broken \ufffd message" in why["message"]
    for string in all_strings(row):
        string.encode("utf-8")  # strict: a lone surrogate would raise here
    # the store took the render and its console too
    import sqlite3

    db = sqlite3.connect(refpool_home / "refpool.db")
    assert db.execute("SELECT count(*) FROM renders").fetchone()[0] >= 1


# -- the static pass ---------------------------------------------------------------------------
DEEP_CHAIN = (
    "function setup() {\n  createCanvas(600, 600, WEBGL);\n  brush.circle(300, 300, 40);\n"
    "  const q = a" + ".b" * 12_000 + ";\n}\n"
)


def test_the_static_pass_reads_a_12000_deep_member_chain():
    from renderer.gate import static_check

    found = static_check(DEEP_CHAIN)
    assert all(v.code != "syntax_error" for v in found), found


@pytest.mark.browser
def test_every_file_gets_a_row_beside_a_12000_deep_chain(tmp_path, refpool_home):
    deep = tmp_path / "deep.js"
    deep.write_text(DEEP_CHAIN)
    proc = run_cli("render", str(deep), str(TRIVIAL), "--json")
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    rows = {Path(r["file"]).name: r for r in json_rows(proc)}
    assert set(rows) == {"deep.js", "trivial.js"}
    assert rows["trivial.js"]["accepted"]
    assert not rows["deep.js"]["accepted"] and rows["deep.js"]["violations"]


@pytest.mark.browser
@pytest.mark.parametrize("node", ["/nonexistent/node", "/bin/false"])
def test_a_broken_static_pass_gives_each_file_a_row_not_a_traceback(node, refpool_home):
    """No Node.js at that path, or a "node" that exits at once: every file still gets a row."""
    proc = run_cli("render", str(TRIVIAL), str(YELLOW), "--json", env={"REFPOOL_NODE": node})
    assert proc.returncode == 3 and b"Traceback" not in proc.stderr, proc.stderr.decode()
    rows = json_rows(proc)
    assert len(rows) == 2
    for row in rows:
        [why] = row["violations"]
        assert why["code"] == "static_pass_failed" and row["infra_error"]
        assert why["message"].startswith("the static pass failed")
    assert cache_entries(refpool_home) == []


# -- pixels -----------------------------------------------------------------------------------
# Before renderer/brush_patches.py, 10-19 of 360,000 pixels along fill edges differed between
# three renders of one program and seed (by up to 15/255): p5.brush's fill shader took
# derivatives after an early return, which SwiftShader answers with leftover lane values.


@pytest.mark.browser
@pytest.mark.parametrize(
    "sketch", [YELLOW, YELLOW.with_name("coral_hibiscus.js")], ids=["yellow", "coral"]
)
def test_one_program_and_seed_render_the_same_png_three_times(renderer, sketch):
    source = sketch.read_text()
    results = [renderer.render(source, seed=7, skip_static=True) for _ in range(3)]
    assert all(r.accepted for r in results), [r.gate.violations for r in results]
    assert len({r.cache_key for r in results}) == 1  # caches key by program + seed + versions
    first = np.asarray(Image.open(io.BytesIO(results[0].png)).convert("RGB")).astype(int)
    for other in results[1:]:
        pixels = np.asarray(Image.open(io.BytesIO(other.png)).convert("RGB")).astype(int)
        differing = int((np.abs(first - pixels).max(axis=2) > 0).sum())
        assert differing == 0, f"{differing} pixels differ between renders of one program and seed"
    assert len({r.png for r in results}) == 1  # so a PNG's sha256 names the painting


def test_the_fill_shader_patch_takes_derivatives_before_any_pixel_returns():
    from renderer.brush_patches import EARLY_RETURN, ShaderPatchError, deterministic_brush
    from renderer.libserver import node_modules

    library = (node_modules() / "p5.brush" / "dist" / "p5.brush.js").read_text(encoding="utf-8")
    patched = deterministic_brush(library)
    assert patched.count("dFdx") == 1 and patched.count(EARLY_RETURN) == 1
    assert patched.index("dFdx") < patched.index(EARLY_RETURN)
    assert library.index("dFdx") > library.index(EARLY_RETURN)  # the shader as published
    assert len(patched) == len(library) + len("if(!u_isBrush){}")
    with pytest.raises(ShaderPatchError, match="npm ci"):
        deterministic_brush(library.replace(EARLY_RETURN, "if(maskColor.a<0.01){return;}"))


STROKES_AND_WASH = """
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.set("HB", "#2d4a6b", 2);
  brush.line(80, 120, 520, 160);
  brush.set("marker", "#b0412e", 1.5);
  brush.flowLine(100, 400, 300, -20);
  brush.hatchStyle("2B", "#7a3b2e", 1);
  brush.hatch(10, PI / 5);
  brush.fill("#e2b33e", 160);
  brush.fillBleed(0.3);
  brush.rect(200, 220, 220, 180);
}
"""


@pytest.mark.browser
def test_the_speed_rewrite_paints_the_same_bytes(renderer, monkeypatch):
    """Renders p5.brush served only deterministic, in a browser of its own, and compares
    PNG bytes with the shared renderer's (deterministic + the exact speed-up)."""
    import renderer.libserver as libserver
    from renderer import RenderConfig, SyncRenderer
    from renderer.brush_patches import deterministic_brush, gpu_like_masks

    def without_the_speed_up(library: str, *, env_pixels: bool = False) -> str:
        """What the page loads, less the rewritten pigment mix (the masks stay the env's)."""
        plain = deterministic_brush(library)
        return plain if env_pixels else gpu_like_masks(plain)

    jobs = [
        (YELLOW.with_name("coral_hibiscus.js").read_text(), 0, None),
        (YELLOW.read_text(), 7, None),
        (STROKES_AND_WASH, 3, "permissive"),
    ]
    fast = [
        renderer.render(src, seed=seed, profile=prof, skip_static=True) for src, seed, prof in jobs
    ]
    monkeypatch.setattr(libserver, "served_brush", without_the_speed_up)
    with SyncRenderer(RenderConfig(slots=1, deadline_s=30)) as plain:
        slow = [
            plain.render(src, seed=seed, profile=prof, skip_static=True) for src, seed, prof in jobs
        ]
    for (_, seed, _), a, b in zip(jobs, fast, slow, strict=True):
        assert a.accepted and b.accepted, (a.gate.violations, b.gate.violations)
        assert a.png == b.png, f"seed {seed}: the rewritten pigment mix painted other pixels"


def test_the_speed_rewrite_refuses_a_library_it_was_not_written_for():
    from renderer.brush_patches import (
        CONCENTRATIONS,
        ShaderPatchError,
        leaner_pigment_mix,
        served_brush,
    )
    from renderer.libserver import node_modules

    library = (node_modules() / "p5.brush" / "dist" / "p5.brush.js").read_text(encoding="utf-8")
    served = served_brush(library)
    assert "spectral_reflectance_to_xyz(R1)" not in served  # luminance sums only Y
    assert served.index(CONCENTRATIONS) < served.index("float ksMix=0.;")
    # the Y-only sum takes the Y coefficients of the XYZ sum, in order
    y_sum = served[served.index("float spectral_reflectance_to_y") :]
    assert y_sum.count("y+=R[") == 38 and "y+=R[0]*0.0000018442894440;" in y_sum
    with pytest.raises(ShaderPatchError, match="npm ci"):
        leaner_pigment_mix(library.replace(CONCENTRATIONS, CONCENTRATIONS.replace("2.", "3.")))
