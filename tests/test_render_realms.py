"""Which realm ran out decides who is charged: the sketch's worker, or the renderer.

The sketch's own code runs only in its worker, which records calls; the painting page then
replays a checked call list. A worker that does not finish is the sketch's `timeout`; a replay,
a capture or a page that runs long or dies after the worker answered is the renderer's, so it
is retried and, if it keeps failing, an `infra_error`: never a verdict, never cached. A busy
machine slows the replay (p5.brush and SwiftShader), not an honest sketch's worker (~50 ms).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
SKETCHES = HERE / "sketches"
CORAL = (SKETCHES / "coral_hibiscus.js").read_text()
YELLOW = (SKETCHES / "yellow_hibiscus.js").read_text()
LOOP = (HERE / "hostile" / "infinite_loop.js").read_text()

pytestmark = pytest.mark.browser


def _sketch_faults(result) -> list[str]:
    return [v.code for v in result.gate.violations]


def test_a_replay_past_its_budget_is_infra_not_the_sketchs_timeout():
    """Coral's worker records its calls in ~50 ms; replaying them takes seconds. With a 1 s
    budget the replay runs out: that was charged as the sketch's `timeout`, for good."""
    from renderer import RenderConfig, SyncRenderer

    with SyncRenderer(RenderConfig(slots=1, attempts=2)) as r:
        result = r.render(CORAL, seed=4, deadline_s=1.0)
        assert _sketch_faults(result) == [], result.gate.violations
        assert result.infra_error and "replaying" in result.infra_error
        assert r.renderer.stats["infra_retries"] == 2
        again = r.render(CORAL, seed=4, deadline_s=1.0)  # never cached as a verdict
        assert again.infra_error and not again.cached
        assert r.render(CORAL, seed=4).accepted  # with the default budgets it paints


def test_an_infinite_loop_is_still_the_sketchs_timeout_in_bounded_time():
    from renderer import RenderConfig, SyncRenderer

    with SyncRenderer(RenderConfig(slots=1)) as r:
        started = time.monotonic()
        result = r.render(LOOP, seed=1, deadline_s=2)
        assert _sketch_faults(result) == ["timeout"]
        assert result.infra_error is None
        assert time.monotonic() - started < 2 + 8


def test_a_page_that_dies_while_replaying_is_retried_not_charged(monkeypatch):
    """The renderer process crashed after the worker answered (Page.crash over CDP, as the
    OOM killer would): that was charged as the sketch's `crash`."""
    from renderer import RenderConfig, SyncRenderer, engine

    replaying = threading.Event()  # the page fetched p5.brush: it holds the checked calls
    pages = []
    real_drive = engine.Renderer._drive

    async def spy(self, pool, slot, spec, budget_s):
        def seen(request) -> None:
            if request.url.endswith("/lib/p5.brush.js"):
                replaying.set()

        slot.page.on("request", seen)
        pages.append(slot.page)
        return await real_drive(self, pool, slot, spec, budget_s)

    monkeypatch.setattr(engine.Renderer, "_drive", spy)
    with SyncRenderer(RenderConfig(slots=1)) as r:
        crashed = threading.Event()

        def crash_once_replaying() -> None:
            if not replaying.wait(60):
                return
            page = pages[0]
            try:
                session = r._call(page.context.new_cdp_session(page), timeout=5)
                r._call(session.send("Page.crash"), timeout=5)
            except Exception:
                pass  # the page is gone before it could answer
            crashed.set()

        killer = threading.Thread(target=crash_once_replaying)
        killer.start()
        result = r.render(YELLOW, seed=2)
        killer.join(70)
        assert crashed.is_set(), "the page never reached the renderer's realm"
        assert _sketch_faults(result) == [], result.gate.violations
        assert result.accepted and result.infra_error is None
        assert r.renderer.stats["infra_retries"] == 1


def _hog(seconds: float) -> subprocess.Popen:
    code = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass\n"
    return subprocess.Popen([sys.executable, "-c", code])


def test_a_busy_machine_never_charges_an_honest_sketch():
    """What the user's machine had: rival Chromiums painting beside us and CPU hogs. Budgets
    are tight (3 s) so the load bites on 2 cores: every honest render is accepted or an
    infra_error, never the sketch's fault; an infinite loop is still the sketch's timeout."""
    from renderer import RenderConfig, SyncRenderer

    stop = threading.Event()
    hogs = [_hog(120) for _ in range(2)]

    def rival() -> None:
        with SyncRenderer(RenderConfig(slots=1)) as other:
            while not stop.is_set():
                other.render(CORAL + f"\n// {time.time()}\n", seed=3)

    rivals = [threading.Thread(target=rival) for _ in range(2)]
    try:
        for t in rivals:
            t.start()
        time.sleep(3)  # let the rivals start painting
        with SyncRenderer(RenderConfig(slots=2, deadline_s=3)) as r:
            results = [r.render(src, seed=s) for src, s in ((CORAL, 5), (YELLOW, 6), (CORAL, 7))]
            loop = r.render(LOOP, seed=1)
            infra = r.renderer.stats.get("infra_retries", 0)
    finally:
        stop.set()
        for hog in hogs:
            hog.kill()
        for t in rivals:
            t.join(120)
    assert all(_sketch_faults(x) == [] for x in results), [x.gate.violations for x in results]
    assert all(x.accepted or x.infra_error for x in results)
    assert _sketch_faults(loop) == ["timeout"]
    print(f"under load: {sum(x.accepted for x in results)} accepted, infra retries {infra}")


def _children(pid: int) -> dict[int, str]:
    """pid -> command line of the direct children of `pid` (from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                found[int(entry.name)] = (
                    (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                )
        except (OSError, ValueError, IndexError):
            continue
    return found


def _batch_with_a_kill(kill) -> tuple[list, dict]:
    """Four honest renders on two slots; `kill(driver_pid, browser_pid)` once they run."""
    import asyncio
    import os

    from renderer import RenderConfig, Renderer

    async def main():
        before = set(_children(os.getpid()))
        async with Renderer(RenderConfig(slots=2, attempts=2)) as r:
            (driver,) = [
                p
                for p, cmd in _children(os.getpid()).items()
                if p not in before and "playwright" in cmd
            ]
            (browser,) = [p for p, cmd in _children(driver).items() if "chromium" in cmd]
            jobs = [
                asyncio.ensure_future(r.render(src + f"\n// {i}\n", seed=i))
                for i, src in enumerate((YELLOW, CORAL, YELLOW, CORAL))
            ]
            await asyncio.sleep(1.0)  # the first two are painting
            kill(driver, browser)
            results = await asyncio.wait_for(asyncio.gather(*jobs), timeout=300)
            after = await r.render(YELLOW, seed=9)
            return [*results, after], dict(r.stats)

    return asyncio.run(main())


def test_a_browser_killed_mid_batch_is_infra_retried_and_nothing_is_charged():
    import os
    import signal

    results, stats = _batch_with_a_kill(lambda driver, browser: os.kill(browser, signal.SIGKILL))
    assert all(_sketch_faults(x) == [] for x in results), [x.gate.violations for x in results]
    assert all(x.accepted for x in results), [x.infra_error for x in results]
    assert stats["browser_restarts"] >= 1 and stats["infra_retries"] >= 1


def test_a_driver_killed_mid_batch_gets_a_new_driver_and_nothing_is_charged(caplog):
    """The Playwright driver itself died (TargetClosedError, a closed connection): a new
    driver and browser take the work; nothing is charged to a sketch, nothing hangs, and the
    dead driver's leftovers print no "Future exception was never retrieved"."""
    import gc
    import os
    import signal

    results, stats = _batch_with_a_kill(lambda driver, browser: os.kill(driver, signal.SIGKILL))
    gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
    assert all(_sketch_faults(x) == [] for x in results), [x.gate.violations for x in results]
    assert all(x.accepted for x in results), [x.infra_error for x in results]
    assert stats["browser_restarts"] >= 1


def test_generate_ends_with_exit_3_when_the_renderer_cannot_come_back(
    monkeypatch, capsys, photo_id, store
):
    """The browser dies and cannot be relaunched: every round left is `infra_error` (never a
    program's verdict, asked again on a rerun), nothing hangs, and the command says what
    happened and exits 3, as every infrastructure failure does."""
    import functools
    import os
    import signal

    from generators import batch
    from refpool.cli import main
    from refpool.core.store import candidates
    from renderer import RenderConfig, SyncRenderer

    before = set(_children(os.getpid()))
    with SyncRenderer(RenderConfig(slots=1)) as r:
        (driver,) = [
            p for p, c in _children(os.getpid()).items() if p not in before and "playwright" in c
        ]
        (browser,) = [p for p, c in _children(driver).items() if "chromium" in c]
        r.renderer.pool.executable = "/nonexistent/chromium"  # no browser can start again
        os.kill(browser, signal.SIGKILL)
        monkeypatch.setattr(batch, "generate", functools.partial(batch.generate, renderer=r))
        started = time.monotonic()
        code = main(["generate", "--photos", str(photo_id), "--rounds", "2", "--no-progress"])
        err = capsys.readouterr().err
    assert code == 3, err
    assert "the renderer stopped" in err and "rerun" in err
    assert time.monotonic() - started < 120
    made = candidates.list_candidates(store)
    assert made and all(c.outcome == "infra_error" and not c.violations for c in made)


def test_ctrl_c_ends_a_batch_promptly_and_cleanly(photo_id, refpool_home):
    """Ctrl-C in the middle of rendering: exit 130 within seconds, one clean line, no
    traceback and no "Future exception was never retrieved"; a rerun resumes."""
    import os
    import signal

    env = {**os.environ, "REFPOOL_HOME": str(refpool_home)}
    argv = [str(Path(sys.executable).parent / "refpool"), "generate", "--no-progress"]
    proc = subprocess.Popen(
        [*argv, "--candidates", "2", "--rounds", "3"],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(8)  # Chromium is up and rounds are rendering
    stopped = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert time.monotonic() - stopped < 20
    assert "Traceback" not in err and "never retrieved" not in err, err
    assert "finished work is saved" in err
