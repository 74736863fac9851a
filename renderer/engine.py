"""The shared renderer: one headless Chromium, a pool of warm pages, a gate at every step.

A render goes: cache, static pass, then a job on a warm page (browser.py), judged from the
page's answer (verdict.py) and kept in the cache (cache.py). A job that hangs or crashes
its page is the sketch's fault; if the browser itself turns out unhealthy it is restarted
and the job retried. Only when every attempt fails that way is it an infra error.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import secrets
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from refpool.core.contracts import Render, Violation
from refpool.core.defaults import GATE_PROFILE
from renderer.browser import CHROMIUM_FLAGS, BrowserPool, InfraError, Slot, default_slots
from renderer.cache import RenderCache, cache_key, program_sha
from renderer.gate import static_check
from renderer.job import job_script, page_spec, realm_config
from renderer.profiles import CODES, Profile, get_profile
from renderer.verdict import (
    PageOutcome,
    RenderStamp,
    SketchFault,
    Timing,
    gate_verdict,
    parse_outcome,
)

__all__ = [
    "CHROMIUM_FLAGS",
    "InfraError",
    "RenderConfig",
    "Renderer",
    "SyncRenderer",
    "default_slots",
]

T = TypeVar("T")
RENDERER_DOWN_ADVICE = (
    "Finished work is saved. Check that Chromium starts (REFPOOL_CHROMIUM) and that the"
    " machine has free memory, then rerun: the work left is asked again"
)
REPLAY_GRACE_S = 5.0  # beyond the deadline: the page reports its own timeouts first


@dataclass
class RenderConfig:
    width: int = 600
    height: int = 600
    profile: str = GATE_PROFILE  # a gate profile's name, resolved when the Renderer is made
    slots: int = field(default_factory=default_slots)
    deadline_s: float = 30.0  # the sketch's own budget: its worker recording its calls
    # The renderer's budget for replaying a checked call list and reading the canvas (None:
    # the same as deadline_s). Running past it is never the sketch's fault: it is retried.
    replay_budget_s: float | None = None
    max_frames: int = 60  # a looping sketch is captured after this many frames
    heap_mb: int = 512
    attempts: int = 2  # for infrastructure failures only
    cache_dir: Path | None = None
    # The env's exact pixels (2D canvases on SwiftShader, ~17x slower). Off: software masks
    # patched to blend as its GPU does (renderer/brush_patches.py), at software speed.
    env_pixels: bool = False
    chromium: str = field(
        default_factory=lambda: os.environ.get("REFPOOL_CHROMIUM", "/usr/bin/chromium")
    )


class Renderer:
    """Async renderer. Use `async with Renderer(config) as r: await r.render(source)`."""

    def __init__(self, config: RenderConfig | None = None) -> None:
        self.config = config or RenderConfig()
        self.profile: Profile = get_profile(self.config.profile)  # the default, resolved once
        self.stats = {
            "renders": 0,
            "cache_hits": 0,
            "recycled_slots": 0,
            "browser_restarts": 0,
            "infra_retries": 0,  # attempts our own realm failed (never the sketch's verdict)
        }
        self._cache = RenderCache(self.config.cache_dir)
        self._pool: BrowserPool | None = None

    async def __aenter__(self) -> Renderer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        self._pool = await BrowserPool.open(
            self.config.chromium,
            size=(self.config.width, self.config.height),
            heap_mb=self.config.heap_mb,
            slots=self.config.slots,
            stats=self.stats,
            env_pixels=self.config.env_pixels,
        )

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()

    @property
    def pool(self) -> BrowserPool:
        """The browser and its warm pages; InfraError before `start()`."""
        if self._pool is None:
            raise InfraError("the renderer is not started: use `async with Renderer() as r`")
        return self._pool

    @property
    def broken(self) -> str | None:
        """Why the browser could not be brought back, or None while it works."""
        return self._pool.broken if self._pool is not None else None

    @property
    def lib_versions(self) -> dict[str, str]:
        """p5, p5.brush and Chromium versions ({} before `start()`)."""
        return self._pool.versions if self._pool is not None else {}

    def cache_key(
        self, source: str, seed: int, profile: str, deadline_s: float | None = None
    ) -> str:
        """The render cache's key; `profile` is the gate profile's name."""
        size = (self.config.width, self.config.height)
        return cache_key(
            source,
            seed,
            size=size,
            lib_versions=self.lib_versions,
            profile=profile,
            max_frames=self.config.max_frames,
            deadline_s=deadline_s or self.config.deadline_s,
            env_pixels=self.config.env_pixels,
        )

    # -- rendering --------------------------------------------------------------------------
    async def render(
        self,
        source: str,
        seed: int = 0,
        profile: str | Profile | None = None,
        *,
        deadline_s: float | None = None,
        skip_static: bool = False,
    ) -> Render:
        """Gate and render one program. Never raises for a bad program; see Render.infra_error.

        `profile` overrides the config's (a name or a Profile). `skip_static` runs the page
        even when the static pass objects (benchmarks, and tests of the runtime gate); the
        run-time rules still apply, and nothing is cached.
        """
        resolved = get_profile(profile) if profile else self.profile
        pool = self.pool
        key = self.cache_key(source, seed, resolved.name, deadline_s)
        cached = None if skip_static else self._cache.get(key)
        if cached is not None:
            self.stats["cache_hits"] += 1
            return cached
        stamp = RenderStamp(
            program_sha=program_sha(source),
            seed=seed,
            width=self.config.width,
            height=self.config.height,
            cache_key=key,
            lib_versions=self.lib_versions,
            profile=resolved.name,
        )
        # In a thread: the event loop keeps serving other slots' renders meanwhile.
        found = [] if skip_static else await asyncio.to_thread(static_check, source, resolved)
        if found:
            return self._keep(stamp.failed(found), skip_static)
        deadline = deadline_s or self.config.deadline_s
        last_infra = ""
        for attempt in range(self.config.attempts):
            if pool.broken:  # nothing to retry on: say so at once
                last_infra = f"{pool.broken}. {RENDERER_DOWN_ADVICE}"
                break
            last_attempt = attempt == self.config.attempts - 1
            try:
                outcome = await self._run_job(
                    pool, source, seed, resolved, deadline, last_attempt, stamp.timing
                )
            except InfraError as exc:
                last_infra = str(exc)
                self.stats["infra_retries"] += 1
                continue
            except SketchFault as fault:
                result = stamp.failed([fault.violation], console=fault.console)
            else:
                # Decoding and measuring the PNG takes ~0.1 s of CPU: off the event loop,
                # so the other slots' pages are served meanwhile.
                gate = await asyncio.to_thread(gate_verdict, outcome, resolved)
                result = stamp.finish(gate, png=outcome.png, console=outcome.console)
            self.stats["renders"] += 1
            return self._keep(result, skip_static)
        return stamp.failed([], infra_error=last_infra or "renderer unavailable")

    def _keep(self, result: Render, skip_static: bool) -> Render:
        if not skip_static:
            self._cache.put(result)
        return result

    async def _run_job(
        self,
        pool: BrowserPool,
        source: str,
        seed: int,
        profile: Profile,
        deadline_s: float,
        last_attempt: bool = True,
        timing: Timing | None = None,
    ) -> PageOutcome:
        """Run on a free slot. Raises SketchFault (a hang or crash) or InfraError (ours)."""
        waited = time.perf_counter()
        async with pool.turns:  # at most `slots` jobs at a time; a spare page is kept ready
            slot = await pool.take()
            if timing is not None:
                timing.queued(time.perf_counter() - waited)
            return await self._run_on(pool, slot, source, seed, profile, deadline_s, last_attempt)

    async def _run_on(
        self,
        pool: BrowserPool,
        slot: Slot,
        source: str,
        seed: int,
        profile: Profile,
        deadline_s: float,
        last_attempt: bool,
    ) -> PageOutcome:
        url = pool.server.job_url(secrets.token_hex(12))
        config = realm_config(
            profile,
            seed,
            script_url=url,
            size=(self.config.width, self.config.height),
            max_frames=self.config.max_frames,
            p5_facts=pool.p5_facts,
        )
        script, prefix_lines = job_script(source, config)
        pool.server.add_job(url, script)
        replay_budget_s = self.config.replay_budget_s or deadline_s
        slot.phase, slot.phase_token = "sketch", secrets.token_hex(16)
        spec = page_spec(
            source,
            config,
            worker_url=url,
            prefix_lines=prefix_lines,
            deadline_s=deadline_s,
            replay_budget_s=replay_budget_s,
            phase_token=slot.phase_token,
        )
        slot.console.clear()
        settled = False  # the slot is accounted for: still good, or already replaced
        try:
            outcome = await self._drive(pool, slot, spec, deadline_s + replay_budget_s)
            settled = True
            return outcome
        except SketchFault:  # the page stopped the sketch's worker itself: the slot is fine
            settled = True
            raise
        except InfraError:
            settled = True
            raise
        except TimeoutError:
            # The page never answered. Only while the sketch's realm ran can that be the
            # sketch's doing; once the page holds its checked calls, the time is ours.
            if slot.phase == "sketch":
                console = await pool.after_sketch_failure(slot, "timeout", last_attempt)
                settled = True
                raise SketchFault.timeout(deadline_s, console) from None
            settled = True
            await self._give_up_slot(pool, slot, "the page stopped answering while replaying")
        except Exception as exc:  # page crash, navigation, browser gone, protocol error
            text = str(exc)
            if pool.connected and slot.phase == "sketch":  # it crashed or unloaded its page
                console = await pool.after_sketch_failure(slot, "crash", last_attempt)
                settled = True
                raise SketchFault.crash(text, console) from None
            settled = True
            if pool.connected:  # the page died in our realm: a fresh page for the retry
                await self._give_up_slot(pool, slot, f"the page failed while replaying: {text}")
            await pool.restart(f"browser failure: {text[:200]}")
            raise InfraError(f"browser failure: {text[:300]}") from None
        finally:
            pool.server.drop_job(url)
            if settled:
                pool.give_back(slot)
            else:
                await pool.recycle(slot)

    async def _give_up_slot(self, pool: BrowserPool, slot: Slot, why: str) -> NoReturn:
        """The renderer's own realm failed on this page: replace it, restart an unhealthy
        browser, and raise InfraError so the job is retried, never charged to the sketch."""
        slot.dead = True
        await pool.recycle(slot)
        if not await pool.healthy():
            await pool.restart(f"unhealthy after: {why[:200]}")
        raise InfraError(why[:300])

    async def _drive(
        self, pool: BrowserPool, slot: Slot, spec: dict[str, Any], budget_s: float
    ) -> PageOutcome:
        """Run the job on the page; its answer carries the canvas's own pixels.

        The page stops the sketch's worker, or its painting, at the deadline; a page that
        has not answered a short grace later is given up as hung.
        """
        run = slot.page.evaluate("([api, spec]) => window[api].run(spec)", [pool.api, spec])
        raw = await asyncio.wait_for(run, timeout=budget_s + REPLAY_GRACE_S)
        size = (self.config.width, self.config.height)
        outcome = await asyncio.to_thread(parse_outcome, raw, size)  # re-encodes the PNG
        if outcome.status == "timeout":  # only the sketch's worker is timed out on the page
            raise SketchFault.timeout(spec["deadlineMs"] / 1000, outcome.console)
        if outcome.status == "infra":  # our harness failed before any sketch code ran: retry
            slot.dead = True
            await pool.recycle(slot)
            raise InfraError(f"harness: {outcome.detail}")
        late = await late_violations(pool, slot)
        if late:  # an attempt to leave the page: the job fails, whatever it painted
            violations = [*outcome.violations, *late]
            console = [*outcome.console, *slot.console][:50]
            return dataclasses.replace(
                outcome, status="error", violations=violations, png=None, console=console
            )
        return dataclasses.replace(outcome, console=[*outcome.console, *slot.console][:50])


async def late_violations(pool: BrowserPool, slot: Slot) -> list[Violation]:
    """What the page and browser reported after the answer: CSP reports, requests, popups.

    The page serves this job only, so whatever arrives before it is closed is this job's.
    One short pause lets the browser deliver reports already on their way.
    """
    found: list[Violation] = []
    wait = "(api) => new Promise((r) => setTimeout(r, 25)).then(() => window[api].late())"
    with contextlib.suppress(Exception):  # a page that no longer answers is discarded anyway
        raw = await asyncio.wait_for(slot.page.evaluate(wait, pool.api), timeout=2)
        for item in json.loads(raw):
            code = item.get("code") if item.get("code") in CODES else "forbidden_api"
            found.append(Violation(code, str(item.get("message"))[:300], item.get("line")))
    for attempt in dict.fromkeys(slot.escapes):
        message = f"{attempt} tried to leave the page: {CODES['forbidden_api']}"
        found.append(Violation("forbidden_api", message))
    return found


class SyncRenderer:
    """Blocking wrapper: runs a Renderer on its own event loop thread. Thread-safe."""

    def __init__(self, config: RenderConfig | None = None) -> None:
        self.config = config or RenderConfig()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, daemon=True, name="refpool-renderer"
        )
        self._renderer = Renderer(self.config)

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self) -> SyncRenderer:
        self._thread.start()
        self._call(self._renderer.start())
        return self

    def __enter__(self) -> SyncRenderer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def renderer(self) -> Renderer:
        return self._renderer

    def render(
        self, source: str, seed: int = 0, profile: str | Profile | None = None, **kwargs: Any
    ) -> Render:
        return self._call(self._renderer.render(source, seed, profile, **kwargs))

    def close(self) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self._call(self._renderer.close(), timeout=30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
