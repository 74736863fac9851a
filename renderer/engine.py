"""The shared renderer: one headless Chromium, a pool of warm pages, a gate at every step.

Each slot is a browser context holding one harness page that stays alive between jobs (the
page resets p5 and reloads p5.brush itself, ~0.1 s instead of ~0.25 s for a navigation).
A job that hangs or crashes its page costs only that slot, which is rebuilt; if the browser
itself is unhealthy it is restarted and the job retried. Only then is it an infra error.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from refpool.contracts import GateResult, Render, Violation
from renderer.gate import measure_coverage, static_check
from renderer.libserver import HERE, LibServer, library_versions
from renderer.profiles import CODES, P5_HELPERS, P5_PRIMITIVES, PAINTING_CALLS, get_profile

T = TypeVar("T")

# Globals a sketch must never touch, shadowed by the sketch factory's parameters.
SHADOWED: tuple[tuple[str, str], ...] = tuple(
    (name, "forbidden_api")
    for name in (
        "document", "window", "globalThis", "self", "top", "parent", "frames", "opener",
        "navigator", "location", "history", "localStorage", "sessionStorage", "indexedDB",
        "caches", "fetch", "XMLHttpRequest", "WebSocket", "EventSource", "Worker",
        "SharedWorker", "importScripts", "Image", "OffscreenCanvas", "MessageChannel",
        "BroadcastChannel", "setTimeout", "setInterval", "requestAnimationFrame",
        "requestIdleCallback", "queueMicrotask", "Promise", "Function", "WebAssembly",
        "open", "alert", "postMessage", "p5", "__refpoolDefine", "structuredClone",
    )
) + (
    ("drawingContext", "raw_webgl"), ("canvas", "raw_webgl"), ("_renderer", "raw_webgl"),
    ("WebGLRenderingContext", "raw_webgl"), ("WebGL2RenderingContext", "raw_webgl"),
    ("pixels", "pixel_write"),
)  # fmt: skip

PREFIX_LINES = 2
HARNESS_VERSION = hashlib.sha256((HERE / "harness.js").read_bytes()).hexdigest()[:12]

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",  # software raster for 2D canvases; WebGL still gets SwiftShader below
    "--disable-gpu-sandbox",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
    # Lets SwiftShader start on each framebuffer's work while JS still draws (0.88x time).
    "--enable-angle-features=preferSubmitAtFBOBoundary",
    "--disable-gpu-process-crash-limit",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
)


def default_slots() -> int:
    # Pages share one GPU process, so more slots than cores only add latency.
    return max(1, min(2, os.cpu_count() or 1))


@dataclass
class RenderConfig:
    width: int = 600
    height: int = 600
    profile: str = "reference"
    slots: int = field(default_factory=default_slots)
    deadline_s: float = 30.0  # per render, whole job
    max_frames: int = 60  # a looping sketch is captured after this many frames
    heap_mb: int = 512
    attempts: int = 2  # for infrastructure failures only
    cache_dir: Path | None = None
    chromium: str = field(
        default_factory=lambda: os.environ.get("REFPOOL_CHROMIUM", "/usr/bin/chromium")
    )


class InfraError(RuntimeError):
    """Our machinery failed (not the sketch's fault)."""


def program_sha(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def job_script(
    source: str, shadowed: list[tuple[str, str]] | tuple[tuple[str, str], ...] = SHADOWED
) -> bytes:
    """Wrap a sketch in a strict factory whose parameters shadow forbidden globals.

    The sketch's own block keeps its top-level let/const from colliding with the last job's,
    and the harness learns setup/draw from the return value, not from window.
    """
    params = ", ".join(["brush", *(name for name, _ in shadowed)])
    head = f'__refpoolDefine(function ({params}) {{ "use strict";\n{{\n'
    tail = (
        '\n;return { setup: typeof setup === "function" ? setup : undefined,'
        ' draw: typeof draw === "function" ? draw : undefined };\n}});\n'
    )
    assert head.count("\n") == PREFIX_LINES
    return (head + source + tail).encode("utf-8")


def _parse_outcome(raw: Any) -> dict[str, Any]:
    """The harness answers with a JSON string; anything else means the sketch broke the page."""
    try:
        outcome = json.loads(raw)
        if isinstance(outcome, dict) and outcome.get("status") in ("done", "error", "infra"):
            return outcome
    except (TypeError, ValueError):
        pass
    return {
        "status": "error",
        "violations": [{"code": "tamper", "message": CODES["tamper"], "line": None}],
    }


class _Slot:
    def __init__(self, context: Any, page: Any, generation: int) -> None:
        self.context = context
        self.page = page
        self.generation = generation
        self.console: list[str] = []


class Renderer:
    """Async renderer. Use `async with Renderer(config) as r: await r.render(source)`."""

    def __init__(self, config: RenderConfig | None = None) -> None:
        self.config = config or RenderConfig()
        get_profile(self.config.profile)
        self.lib_versions: dict[str, str] = {}
        self._server: LibServer | None = None
        self._pw: Any = None
        self._browser: Any = None
        self._generation = 0
        self._slots: asyncio.Queue[_Slot] | None = None
        self._restart_lock = asyncio.Lock()
        self._health_lock = asyncio.Lock()
        self._health: _Slot | None = None
        self._shadowed: list[tuple[str, str]] = list(SHADOWED)
        self._api = "__rp_" + secrets.token_hex(8)
        self.stats = {"renders": 0, "cache_hits": 0, "recycled_slots": 0, "browser_restarts": 0}

    # -- lifecycle --------------------------------------------------------------------------
    async def __aenter__(self) -> Renderer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        if not Path(self.config.chromium).exists():
            raise InfraError(
                f"Chromium not found at {self.config.chromium}: install it with "
                "`apt-get install chromium` or set REFPOOL_CHROMIUM to its path"
            )
        try:
            from playwright.async_api import async_playwright
        except ImportError as exc:  # pragma: no cover - a broken install
            raise InfraError(
                "the `playwright` Python package is missing: pip install playwright"
            ) from exc
        self.lib_versions = library_versions()
        self._server = LibServer()
        self._pw = await async_playwright().start()
        self._slots = asyncio.Queue()
        await self._launch()

    async def _launch(self) -> None:
        self._generation += 1
        flags = [*CHROMIUM_FLAGS, f"--js-flags=--max-old-space-size={self.config.heap_mb}"]
        # Playwright gives each launch a fresh temporary profile, and each slot its own context.
        self._browser = await self._pw.chromium.launch(
            executable_path=self.config.chromium,
            args=flags,
            headless=True,
            chromium_sandbox=False,
            # Playwright adds GPU rasterization, which routes p5.brush's 2D fill masks through
            # SwiftShader and makes a render ~10x slower.
            ignore_default_args=["--enable-gpu-rasterization"],
        )
        self.lib_versions["chromium"] = self._browser.version
        self._health = None
        # Every global the page has beyond JS's own and p5's is hidden from sketches: DOM
        # constructors (Text, Option, Range...) would otherwise lead back to `document`.
        self._shadowed = []
        first = await self._new_slot()
        page_globals = await first.page.evaluate("(api) => window[api].globals()", self._api)
        known = {name for name, _ in SHADOWED}
        self._shadowed = list(SHADOWED) + [
            (n, "forbidden_api") for n in page_globals if n not in known
        ]
        await self._configure(first)
        await self._slots.put(first)
        for _ in range(self.config.slots - 1):
            await self._slots.put(await self._new_slot())

    async def _new_slot(self) -> _Slot:
        context = await self._browser.new_context(
            viewport={"width": self.config.width, "height": self.config.height},
            device_scale_factor=1,
            service_workers="block",
            accept_downloads=False,
        )
        page = await context.new_page()
        slot = _Slot(context, page, self._generation)
        page.on("console", lambda msg: slot.console.append(f"{msg.type}: {msg.text}"[:500]))
        await page.goto(f"{self._server.origin}/harness.html#{self._api}", wait_until="load")
        if self._shadowed:
            await self._configure(slot)
        return slot

    async def _configure(self, slot: _Slot) -> None:
        """Hand the page its tripwires once, rather than the whole list with every job."""
        pairs = [list(pair) for pair in self._shadowed]
        await slot.page.evaluate(
            "([api, pairs]) => window[api].configure(pairs)", [self._api, pairs]
        )

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._browser:
                await self._browser.close()
        with contextlib.suppress(Exception):
            if self._pw:
                await self._pw.stop()
        if self._server:
            self._server.close()
        self._browser = self._pw = self._server = None

    # -- rendering --------------------------------------------------------------------------
    def cache_key(self, source: str, seed: int, profile: str) -> str:
        parts = {
            "program": program_sha(source),
            "seed": seed,
            "size": [self.config.width, self.config.height],
            "libs": {k: v for k, v in self.lib_versions.items() if k != "chromium"},
            "profile": profile,
            "harness": HARNESS_VERSION,
            "max_frames": self.config.max_frames,
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    async def render(
        self,
        source: str,
        seed: int = 0,
        profile: str | None = None,
        *,
        deadline_s: float | None = None,
        skip_static: bool = False,
    ) -> Render:
        """Gate and render one program. Never raises for a bad program; see Render.infra_error.

        `skip_static` runs the page even when the static pass objects (benchmarks, and tests of
        the runtime gate); the run-time rules still apply.
        """
        profile = profile or self.config.profile
        prof = get_profile(profile)
        if self._slots is None:
            raise InfraError("the renderer is not started: use `async with Renderer() as r`")
        key = self.cache_key(source, seed, profile)
        cached = None if skip_static else self._cache_get(key)
        if cached is not None:
            self.stats["cache_hits"] += 1
            return cached
        started = time.perf_counter()
        base = {
            "program_sha": program_sha(source), "seed": seed, "width": self.config.width,
            "height": self.config.height, "cache_key": key, "lib_versions": dict(self.lib_versions),
        }  # fmt: skip
        found = [] if skip_static else static_check(source, profile)
        if found:
            result = Render(**base, gate=GateResult(False, found, None, profile),
                            render_ms=(time.perf_counter() - started) * 1000)  # fmt: skip
            if not skip_static:
                self._cache_put(key, result)
            return result

        last_infra = ""
        for attempt in range(self.config.attempts):
            try:
                outcome, png, console = await self._run_job(
                    source,
                    seed,
                    prof.brush_methods,
                    deadline_s or self.config.deadline_s,
                    last_attempt=attempt == self.config.attempts - 1,
                )
            except InfraError as exc:
                last_infra = str(exc)
                continue
            violations = [Violation(**v) for v in outcome.get("violations", [])]
            coverage = None
            if outcome["status"] == "done" and not violations:
                if not outcome.get("canvas"):
                    violations.append(Violation("no_webgl_canvas", CODES["no_webgl_canvas"]))
                elif outcome.get("paints", 0) == 0:
                    violations.append(Violation("no_painting", CODES["no_painting"]))
                if png is not None:
                    coverage = measure_coverage(png)
                    if coverage < prof.min_coverage:
                        violations.append(
                            Violation("blank_canvas", f"{CODES['blank_canvas']} (paint coverage {coverage:.4f} < {prof.min_coverage})")
                        )  # fmt: skip
            self.stats["renders"] += 1
            gate = GateResult(not violations, violations, coverage, profile)
            result = Render(**base, gate=gate, png=png, console=console,
                            render_ms=(time.perf_counter() - started) * 1000)  # fmt: skip
            if not skip_static:
                self._cache_put(key, result)
            return result
        return Render(**base, gate=GateResult(False, [], None, profile),
                      render_ms=(time.perf_counter() - started) * 1000,
                      infra_error=last_infra or "renderer unavailable")  # fmt: skip

    async def _run_job(
        self,
        source: str,
        seed: int,
        brush_methods: tuple[str, ...],
        deadline_s: float,
        last_attempt: bool = True,
    ) -> tuple[dict[str, Any], bytes | None, list[str]]:
        """Run on a free slot. Returns (outcome, png, console); raises InfraError."""
        slot = await self._take_slot()
        token = secrets.token_hex(12)
        url = self._server.add_job(token, job_script(source, self._shadowed))
        spec = {
            "seed": seed & 0x7FFFFFFF,
            "source": source,  # parsed on its own first, so it cannot close our wrapper
            "shadowCount": len(self._shadowed),
            "scriptUrl": url,
            "prefixLines": PREFIX_LINES,
            "config": self._page_config(brush_methods),
        }
        slot.console.clear()
        healthy = False
        try:
            raw = await asyncio.wait_for(
                slot.page.evaluate("([api, spec]) => window[api].run(spec)", [self._api, spec]),
                timeout=deadline_s,
            )
            outcome = _parse_outcome(raw)
            if outcome["status"] == "infra":  # our harness, not the sketch: a fresh page, retry
                slot.dead = True  # type: ignore[attr-defined]
                await self._recycle(slot)
                raise InfraError(f"harness: {outcome.get('detail')}")
            png = None
            if outcome["status"] == "done" and not outcome["violations"]:
                png = await asyncio.wait_for(
                    slot.page.screenshot(
                        clip={"x": 0, "y": 0, "width": self.config.width, "height": self.config.height},
                        type="png",
                    ),
                    timeout=10,
                )  # fmt: skip
            healthy = True
            return outcome, png, list(slot.console[:50])
        except TimeoutError:
            verdict = await self._after_failure(slot, "timeout", last_attempt)
            healthy = True  # the slot was replaced inside _after_failure
            limit = f"{deadline_s:g} s"
            return (
                {
                    "status": "error",
                    "violations": [
                        {
                            "code": "timeout",
                            "message": f"{CODES['timeout']} (limit {limit})",
                            "line": None,
                        }
                    ],
                },
                None,
                verdict,
            )
        except InfraError:
            healthy = True
            raise
        except Exception as exc:  # page crash, navigation, browser gone, protocol error
            text = str(exc)
            if self._browser is not None and self._browser.is_connected():
                # The browser is up: the sketch crashed or unloaded its own page.
                navigated = "context was destroyed" in text or "navigat" in text.lower()
                verdict = await self._after_failure(slot, "crash", last_attempt)
                healthy = True
                code, message = (
                    ("forbidden_api", "The sketch navigated away from or unloaded its page.")
                    if navigated
                    else ("crash", CODES["crash"])
                )
                return (
                    {
                        "status": "error",
                        "violations": [{"code": code, "message": message, "line": None}],
                    },
                    None,
                    verdict,
                )
            await self._restart_browser(f"browser failure: {text[:200]}")
            healthy = True
            raise InfraError(f"browser failure: {text[:300]}") from None
        finally:
            self._server.drop_job(url)
            if not healthy:
                await self._recycle(slot)
            elif slot.generation == self._generation and not getattr(slot, "dead", False):
                self._slots.put_nowait(slot)

    async def _after_failure(self, slot: _Slot, what: str, last_attempt: bool) -> list[str]:
        """The sketch hung or crashed its page: rebuild the slot, then check the browser.

        Browser healthy: the failure was the sketch's. Browser unhealthy: restart it and raise
        InfraError so the job is retried on a fresh browser. If the same sketch wedges the
        browser again on its last attempt while a fresh browser is healthy, the sketch is the
        cause (heavy GPU work keeps the shared GPU process busy after its page is gone).
        """
        console = list(slot.console[:50])
        slot.dead = True  # type: ignore[attr-defined]
        await self._recycle(slot)
        if await self._healthy():
            return console
        await self._restart_browser(f"unhealthy after a sketch {what}")
        if last_attempt and await self._healthy():
            return console
        raise InfraError(f"the browser stopped answering after a sketch {what}; restarted it")

    async def _recycle(self, slot: _Slot) -> None:
        self.stats["recycled_slots"] += 1
        with contextlib.suppress(Exception):
            await asyncio.wait_for(slot.context.close(), timeout=5)
        if slot.generation != self._generation:
            return  # the browser was restarted meanwhile; it made fresh slots
        try:
            self._slots.put_nowait(await asyncio.wait_for(self._new_slot(), timeout=15))
        except Exception:
            await self._restart_browser("could not open a fresh page")

    async def _healthy(self) -> bool:
        """Ping on a page of its own: waiting behind the job queue would measure the backlog."""
        async with self._health_lock:
            for _ in range(2):  # a broken health page is rebuilt once before we give up
                try:
                    if self._health is None:
                        self._health = await asyncio.wait_for(self._new_slot(), timeout=10)
                    answer = await asyncio.wait_for(
                        self._health.page.evaluate("(api) => window[api].ping()", self._api),
                        timeout=5,
                    )
                    return answer == "ok"
                except Exception:
                    old, self._health = self._health, None
                    if old is not None:
                        with contextlib.suppress(Exception):
                            await asyncio.wait_for(old.context.close(), timeout=5)
            return False

    async def _restart_browser(self, why: str) -> None:
        generation = self._generation
        async with self._restart_lock:
            if generation != self._generation:
                return  # someone else already restarted it
            self.stats["browser_restarts"] += 1
            old = self._browser
            while not self._slots.empty():
                self._slots.get_nowait()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old.close(), timeout=10)
            await self._launch()

    async def _take_slot(self) -> _Slot:
        while True:
            slot = await self._slots.get()
            if slot.generation == self._generation:
                return slot

    def _page_config(self, brush_methods: tuple[str, ...]) -> dict[str, Any]:
        return {
            "width": self.config.width,
            "height": self.config.height,
            "maxFrames": self.config.max_frames,
            "helpers": {name: True for name in P5_HELPERS},
            "primitives": {name: True for name in P5_PRIMITIVES},
            "brushMethods": list(brush_methods),
            "paintingCalls": {name: True for name in PAINTING_CALLS},
            "codes": CODES,
        }

    # -- cache ------------------------------------------------------------------------------
    def _cache_paths(self, key: str) -> tuple[Path, Path] | None:
        if not self.config.cache_dir:
            return None
        folder = Path(self.config.cache_dir) / key[:2]
        return folder / f"{key}.json", folder / f"{key}.png"

    def _cache_get(self, key: str) -> Render | None:
        paths = self._cache_paths(key)
        if not paths or not paths[0].exists():
            return None
        try:
            data = json.loads(paths[0].read_text())
            png = paths[1].read_bytes() if paths[1].exists() else None
            data["cached"] = True
            return Render.from_dict({**data, "png": png})
        except (OSError, ValueError, TypeError):
            return None  # a damaged cache entry is simply re-rendered

    def _cache_put(self, key: str, result: Render) -> None:
        paths = self._cache_paths(key)
        if not paths or result.infra_error:
            return  # never cache our own failures
        paths[0].parent.mkdir(parents=True, exist_ok=True)
        if result.png:
            tmp = paths[1].with_suffix(".tmp")
            tmp.write_bytes(result.png)
            os.replace(tmp, paths[1])
        tmp = paths[0].with_suffix(".tmp")
        tmp.write_text(json.dumps(result.to_dict()))
        os.replace(tmp, paths[0])


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
        self, source: str, seed: int = 0, profile: str | None = None, **kwargs: Any
    ) -> Render:
        return self._call(self._renderer.render(source, seed, profile, **kwargs))

    def close(self) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self._call(self._renderer.close(), timeout=30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
