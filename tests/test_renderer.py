"""The shared renderer and its gate, in the real Chromium (one warm browser per session)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from renderer import extract_program, measure_coverage, static_check

pytestmark = pytest.mark.browser

HERE = Path(__file__).parent
SKETCHES = HERE / "sketches"
HOSTILE = sorted((HERE / "hostile").glob("*.js"))


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


@pytest.mark.parametrize("name", ["trivial.js", "yellow_hibiscus.js"])
def test_reference_sketches_are_accepted(renderer, name):
    result = renderer.render((SKETCHES / name).read_text(), seed=3)
    assert result.infra_error is None
    assert result.accepted, result.gate.violations
    assert result.png and result.png.startswith(b"\x89PNG")
    assert Image.open(io.BytesIO(result.png)).size == (600, 600)
    assert 0.01 < result.gate.coverage < 0.9
    assert result.lib_versions["p5"] == "2.3.2" and result.lib_versions["p5.brush"] == "2.2.2"


@pytest.mark.parametrize("path", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_hostile_corpus_is_rejected_with_the_right_code(renderer, path):
    source = path.read_text()
    defused = re.search(r"expect: defused<([\d.]+)", source)
    expected = [] if defused else re.search(r"expect: ([\w|]+)", source).group(1).split("|")
    # Written to slip past the text checks (the AST pass now sees through most of them):
    # the page itself must stop it too, so the static pass is skipped.
    runtime_only = "runtime-only" in source
    result = renderer.render(source, seed=1, deadline_s=5, skip_static=runtime_only)
    assert result.infra_error is None
    if defused:  # the attack is neutralised: whatever is accepted carries no forbidden paint
        assert not result.accepted or result.gate.coverage < float(defused.group(1))
        return
    assert not result.accepted
    codes = [v.code for v in result.gate.violations]
    assert set(codes) & set(expected), (codes, result.gate.violations)
    assert result.render_ms < 15_000  # bounded, hangs included


def test_violations_point_at_the_sketch_line(renderer):
    source = (HERE / "hostile" / "runtime_error.js").read_text()
    result = renderer.render(source, seed=1)
    (violation,) = result.gate.violations
    assert violation.code == "runtime_error"
    assert violation.line == 11  # the `brush.circle(petals.x, ...)` line
    assert "petals" in source.splitlines()[violation.line - 1]


def test_next_render_passes_after_a_hang_and_a_heap_blowup(renderer):
    good = (SKETCHES / "trivial.js").read_text()
    for hostile in ("infinite_loop.js", "heap_blowup.js"):
        bad = renderer.render((HERE / "hostile" / hostile).read_text(), deadline_s=4, seed=9)
        assert not bad.accepted and bad.infra_error is None
        after = renderer.render(good, seed=11)
        assert after.accepted, (hostile, after.gate.violations, after.infra_error)


def test_same_seed_same_image(renderer):
    source = (SKETCHES / "trivial.js").read_text().replace("brush.circle", "brush.circle") + "\n"
    a = renderer.render(source, seed=42)
    b = renderer.render(source + "// same program, new cache key\n", seed=42)
    c = renderer.render(source, seed=43)
    assert a.png == b.png  # identical pixels (renderer/brush_patches.py)
    diff_other = np.abs(pixels(a.png) - pixels(c.png))
    assert (diff_other.max(axis=2) > 24).sum() > 500, "a different seed should paint differently"


def test_browser_death_is_an_infra_event_not_a_rejection(renderer):
    """Kill the browser under the renderer: the job is retried on a fresh one."""
    inner = renderer.renderer
    before = inner.stats["browser_restarts"]
    renderer._call(inner.pool.browser.close())
    # Seed 3, not 5: at 5 the env's seeding paints trivial.js's circle too pale to count.
    result = renderer.render((SKETCHES / "trivial.js").read_text(), seed=3)
    assert result.infra_error is None
    assert result.accepted, result.gate.violations
    assert inner.stats["browser_restarts"] == before + 1


def test_cache_returns_the_same_render_without_the_browser(tmp_path):
    from renderer import RenderConfig, SyncRenderer

    source = (SKETCHES / "trivial.js").read_text()
    with SyncRenderer(RenderConfig(slots=1, cache_dir=tmp_path)) as r:
        first = r.render(source, seed=2)
        second = r.render(source, seed=2)
        assert not first.cached and second.cached
        assert second.png == first.png and second.gate == first.gate
        assert r.renderer.stats["renders"] == 1
        other_seed = r.render(source, seed=4)
        assert not other_seed.cached


def test_static_pass_catches_the_obvious():
    codes = lambda src: {v.code for v in static_check(src)}  # noqa: E731
    good = (SKETCHES / "coral_hibiscus.js").read_text()
    assert static_check(good) == []
    assert "p5_primitive" in codes(good.replace("brush.circle(300, 305", "ellipse(300, 305"))
    assert "text" in codes(good + "\nfunction x() { text('hi', 1, 1); }\n")
    assert "truncated" in codes(good[: good.index("for (let k")])
    assert "unknown_brush_method" in codes(good.replace("brush.noStroke()", "brush.hatch(1)"))
    assert "forbidden_api" in codes(good + "\nfetch('http://x');\n")
    assert "no_webgl_canvas" in codes(good.replace(", WEBGL", ""))
    assert codes("") == {"empty_program"}
    # comments and strings are not code
    assert static_check(good + "\n// rect(1,2,3,4) fetch()\nconst s = 'the ellipse';\n") == []
    # ...except to the env's gate, which reads `text(` even in a comment and a primitive's
    # name even in a string: what it refuses, we refuse, in its words (issue 35)
    found = static_check(good + "\n// text('x')\nconst s = 'ellipse(1)';\n")
    assert {v.code for v in found} == {"text", "p5_primitive"}
    assert all("the env's gate" in v.message for v in found)


def test_extract_program_from_model_replies():
    reply = "Here is my painting:\n```javascript\nfunction setup() {}\n```\nEnjoy!"
    assert extract_program(reply) == "function setup() {}\n"
    assert extract_program("I cannot help with that.") is None
    truncated = "```js\nfunction setup() {\n  createCanvas(600, 600, WEBGL);\n"
    assert "createCanvas" in extract_program(truncated)
    assert extract_program("function setup() { }") is not None


def test_coverage_on_known_images():
    def png(array: np.ndarray) -> bytes:
        buf = io.BytesIO()
        Image.fromarray(array.astype(np.uint8)).save(buf, "PNG")
        return buf.getvalue()

    paper = np.full((100, 100, 3), 246, dtype=np.uint8)
    assert measure_coverage(png(paper)) == 0.0
    painted = paper.copy()
    painted[:25, :] = (200, 40, 40)
    assert measure_coverage(png(painted)) == pytest.approx(0.25)


def test_a_sketch_that_wedges_the_browser_every_time_is_the_sketchs_fault(monkeypatch):
    """Heavy GPU work keeps the shared GPU process busy after the page is gone, so the health
    check fails after each try. Retried on a fresh browser and still wedging it, the sketch
    is to blame: a `timeout` violation, not an infra error that would never be scored.

    The wedge is simulated by the health check's first two answers; all else is real.
    """
    from renderer import RenderConfig, SyncRenderer
    from renderer.browser import BrowserPool

    real_healthy = BrowserPool.healthy
    calls = {"n": 0}

    async def healthy(self):
        calls["n"] += 1
        if calls["n"] <= 2:  # the GPU process is still busy with the sketch's work
            return False
        return await real_healthy(self)

    monkeypatch.setattr(BrowserPool, "healthy", healthy)
    # A page that stops answering: its own deadline is switched off, so only Python's holds.
    from renderer import engine

    real_spec = engine.page_spec
    monkeypatch.setattr(engine, "REPLAY_GRACE_S", 0.5)
    monkeypatch.setattr(
        engine, "page_spec", lambda *a, **k: {**real_spec(*a, **k), "deadlineMs": 10**9}
    )
    with SyncRenderer(RenderConfig(slots=1, attempts=2)) as r:
        result = r.render((HERE / "hostile" / "infinite_loop.js").read_text(), deadline_s=2)
        assert result.infra_error is None, result.infra_error
        assert [v.code for v in result.gate.violations] == ["timeout"]
        assert r.renderer.stats["browser_restarts"] == 2
        after = r.render((SKETCHES / "trivial.js").read_text(), seed=1)
        assert after.accepted


def test_a_hang_under_a_backlog_does_not_restart_the_browser():
    """The health check used to queue behind waiting jobs and time out, so a busy renderer
    restarted a healthy browser and killed renders in flight."""
    import asyncio

    from renderer import RenderConfig, Renderer

    hang = (HERE / "hostile" / "infinite_loop.js").read_text()
    good = (SKETCHES / "yellow_hibiscus.js").read_text()  # a backlog longer than any timeout

    async def main():
        async with Renderer(RenderConfig(slots=1, deadline_s=6)) as r:
            jobs = [r.render(hang, seed=1)] + [
                r.render(good + f"// {i}\n", seed=i) for i in range(8)
            ]
            results = await asyncio.gather(*jobs)
            return results, dict(r.stats)

    results, stats = asyncio.run(main())
    assert [v.code for v in results[0].gate.violations] == ["timeout"]
    assert all(x.accepted and x.infra_error is None for x in results[1:])
    assert stats["browser_restarts"] == 0


def test_a_page_that_navigates_while_replaying_is_retried_on_a_fresh_page(monkeypatch):
    """The sketch's code never runs in the painting page, so a page that unloads while it
    replays the checked calls is the renderer's failure: a fresh page paints it again, with no
    browser restart (which would kill every other render in flight) and no verdict. (This
    was charged to the sketch as `forbidden_api`, read from the error's wording.)"""
    import threading

    from renderer import RenderConfig, SyncRenderer, engine

    replaying = threading.Event()
    pages = []
    real_drive = engine.Renderer._drive

    async def spy(self, pool, slot, spec, budget_s):
        slot.page.on("request", lambda req: req.url.endswith("/p5.brush.js") and replaying.set())
        pages.append(slot.page)
        return await real_drive(self, pool, slot, spec, budget_s)

    monkeypatch.setattr(engine.Renderer, "_drive", spy)
    with SyncRenderer(RenderConfig(slots=1)) as r:
        inner = r.renderer
        outcome = {}
        worker = threading.Thread(
            target=lambda: outcome.update(
                result=r.render((SKETCHES / "yellow_hibiscus.js").read_text(), seed=2)
            )
        )
        worker.start()
        assert replaying.wait(60)
        r._call(pages[0].evaluate("() => { location.reload(); }"))
        worker.join(90)
        result = outcome["result"]
        assert result.gate.violations == []
        assert result.accepted and result.infra_error is None
        assert inner.stats["infra_retries"] == 1
        assert inner.stats["browser_restarts"] == 0


def test_an_infinite_loop_is_stopped_in_its_own_realm():
    """The page terminates the sketch's worker at the deadline: a timeout verdict, with the
    browser and the page never in doubt (no health check, no restart, no recycled slot)."""
    from renderer import RenderConfig, SyncRenderer

    with SyncRenderer(RenderConfig(slots=1)) as r:
        result = r.render((HERE / "hostile" / "infinite_loop.js").read_text(), deadline_s=2)
        assert [v.code for v in result.gate.violations] == ["timeout"]
        assert result.render_ms < 6000
        assert r.renderer.stats["browser_restarts"] == 0
        assert r.renderer.stats["recycled_slots"] == 0
        assert r.render((SKETCHES / "trivial.js").read_text(), seed=1).accepted


def test_frames_of_heavy_gpu_work_past_the_replay_budget_are_infra_on_time():
    """Recorded frames are replayed back to back, not paced by animation frames. Replaying a
    checked call list is the renderer's work, so running past its budget is an infra outcome
    (retried, then `infra_error`), never the sketch's `timeout`; and it is noticed on time."""
    from renderer import RenderConfig, SyncRenderer

    heavy = (
        "function setup() { createCanvas(600, 600, WEBGL); }\n"
        "function draw() { translate(-width / 2, -height / 2); brush.noStroke();\n"
        "  for (let i = 0; i < 3; i++) { brush.fill('#e2583e', 120);\n"
        "    brush.circle(150 + i * 150, 300, 220); } }\n"
    )
    with SyncRenderer(RenderConfig(slots=1, attempts=1)) as r:
        result = r.render(heavy, deadline_s=3)
        assert result.gate.violations == []
        assert result.infra_error and "replaying" in result.infra_error
        assert result.render_ms < 3000 + 3000 + 2500  # the worker's, the replay's, one frame
