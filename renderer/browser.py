"""Browser lifecycle: one headless Chromium, a queue of warm harness pages, health and restart.

Each slot is a browser context holding one painting page (harness.js), used for ONE job and
then thrown away. The sketch itself runs in a Worker the page terminates when the job ends,
so nothing it leaves running meets the next job, and the page never runs sketch code. The next page is opened while the
current job runs, so the cost is mostly CPU, not latency. A job that hangs or crashes its
page costs only that slot; if the browser itself is unhealthy it is restarted. Slots of an
earlier launch are never handed out again.

No request leaves a page or its workers: the browser sends everything but the harness's own
server to a proxy that does not exist, WebRTC may not use UDP around it, and any other request
or popup is recorded against the job.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from refpool.core.errors import RefpoolInfraError
from renderer.libserver import LibServer, library_versions

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright, Request

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    # Software raster for 2D canvases (p5.brush's fill masks, kept at float16 and blended as
    # the GPU blends faint layers: renderer/brush_patches.py); WebGL still gets SwiftShader
    # below. On SwiftShader (the watercolour env's flags) a render is ~17x slower:
    # `env_pixels` drops this flag to paint the env's exact pixels.
    "--disable-gpu",
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


class InfraError(RefpoolInfraError, RuntimeError):
    """Our machinery failed (not the sketch's fault)."""


@dataclass(eq=False)
class Slot:
    """One browser context holding one warm harness page."""

    context: BrowserContext
    page: Page
    generation: int  # the browser launch it belongs to
    console: list[str] = field(default_factory=list)
    dead: bool = False  # closed or being replaced: never hand it out again
    escapes: list[str] = field(default_factory=list)  # requests/popups that tried to leave
    # Which realm the job is in: "sketch" while its worker records calls, "renderer" once the
    # page has taken the checked calls to replay (it logs the job's secret token then).
    phase: str = "sketch"
    phase_token: str = ""

    def note_console(self, kind: str, text: str) -> None:
        if self.phase_token and text == self.phase_token:
            self.phase = "renderer"
        else:
            self.console.append(f"{kind}: {text}"[:500])


def network_flags(origin_host: str) -> list[str]:
    """Every request but the harness server's goes to a proxy nobody listens on.

    `<-loopback>` drops Chromium's implicit proxy bypass for loopback, so other local ports
    are unreachable too. Port 9 (discard) on a TEST-NET address: nothing answers there.
    """
    return [
        "--proxy-server=http://192.0.2.1:9",
        f"--proxy-bypass-list=<-loopback>;{origin_host}",
        "--no-pings",
        "--disable-features=NetworkPrediction,SpeculationRulesPrefetchProxy,Prerender2",
        # WebRTC may not send UDP around the proxy (STUN/TURN to a loopback port).
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]


def launch_flags(env_pixels: bool = False) -> list[str]:
    """CHROMIUM_FLAGS, or with 2D canvases on SwiftShader as the watercolour env has them."""
    return [f for f in CHROMIUM_FLAGS if not (env_pixels and f == "--disable-gpu")]


async def launch_chromium(
    pw: Playwright, executable: str, heap_mb: int, origin_host: str, env_pixels: bool = False
) -> Browser:
    # Playwright gives each launch a fresh temporary profile, and each slot its own context.
    return await pw.chromium.launch(
        executable_path=executable,
        args=[
            *launch_flags(env_pixels),
            *network_flags(origin_host),
            f"--js-flags=--max-old-space-size={heap_mb}",
        ],
        headless=True,
        chromium_sandbox=False,
        # Playwright adds GPU rasterization; nothing here wants it.
        ignore_default_args=["--enable-gpu-rasterization"],
    )


class BrowserPool:
    """The browser and its slots. Open with `await BrowserPool.open(...)`.

    `stats` is the renderer's counter dict; the pool counts recycled slots and restarts in it.
    """

    def __init__(
        self,
        pw: Playwright,
        server: LibServer,
        browser: Browser,
        *,
        libraries: dict[str, str],
        executable: str,
        size: tuple[int, int],
        heap_mb: int,
        slots: int,
        stats: dict[str, int],
        env_pixels: bool = False,
    ) -> None:
        self.pw, self.server, self.browser = pw, server, browser
        self.env_pixels = env_pixels
        self.executable, self.size, self.heap_mb, self.slot_count = executable, size, heap_mb, slots
        self.stats = stats
        self.libraries = libraries  # p5 and p5.brush, as served to the page
        self.chromium_version = browser.version
        self.api = "__rp_" + secrets.token_hex(8)  # the page's API lives under this name
        self.generation = 1
        self.slots: asyncio.Queue[Slot] = asyncio.Queue()
        self.p5_facts: dict[str, Any] = {}  # p5's function names and constants, per launch
        self._health: Slot | None = None
        self._restart_lock = asyncio.Lock()
        self._health_lock = asyncio.Lock()
        self._closed = False
        # Why no browser could be brought back: then every job is infra at once, never a wait.
        self.broken: str | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self.turns = asyncio.Semaphore(slots)  # jobs running at once (pages share one GPU)

    @classmethod
    async def open(
        cls,
        executable: str,
        *,
        size: tuple[int, int],
        heap_mb: int,
        slots: int,
        stats: dict[str, int],
        env_pixels: bool = False,
    ) -> BrowserPool:
        if not Path(executable).exists():
            raise InfraError(
                f"Chromium not found at {executable}: install it with "
                "`apt-get install chromium` or set REFPOOL_CHROMIUM to its path"
            )
        try:
            from playwright.async_api import async_playwright
        except ImportError as exc:  # pragma: no cover - a broken install
            raise InfraError(
                "the `playwright` Python package is missing: pip install playwright"
            ) from exc
        libraries = library_versions()  # fails early, with advice, when `npm ci` was not run
        server = LibServer(env_pixels=env_pixels)
        pw = await async_playwright().start()
        browser = await launch_chromium(pw, executable, heap_mb, server.host, env_pixels)
        pool = cls(
            pw,
            server,
            browser,
            libraries=libraries,
            executable=executable,
            size=size,
            heap_mb=heap_mb,
            slots=slots,
            stats=stats,
            env_pixels=env_pixels,
        )
        await pool._fill()
        return pool

    @property
    def versions(self) -> dict[str, str]:
        """p5, p5.brush and Chromium versions."""
        return {**self.libraries, "chromium": self.chromium_version}

    @property
    def connected(self) -> bool:
        return self.browser.is_connected()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in list(self._background):
            task.cancel()
        with contextlib.suppress(Exception):
            await self.browser.close()
        with contextlib.suppress(Exception):
            await self.pw.stop()
        self.server.close()

    # -- slots -------------------------------------------------------------------------------
    async def take(self) -> Slot:
        """The next free slot of the current browser (waits for one, unless it is broken)."""
        while True:
            if self.broken:
                raise InfraError(self.broken)
            try:
                slot = await asyncio.wait_for(self.slots.get(), timeout=1.0)
            except TimeoutError:
                continue  # look again whether the browser broke meanwhile
            if slot.generation == self.generation:
                return slot

    def give_back(self, slot: Slot) -> None:
        """A slot whose job is over: it is never reused; a fresh page takes its place."""
        if slot.generation != self.generation or slot.dead:
            return
        slot.dead = True
        task = asyncio.get_running_loop().create_task(self._replace(slot))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _replace(self, slot: Slot) -> None:
        # The page goes; its context stays, so the next page finds p5 in the HTTP and code
        # caches. A context that misbehaves is never reused (see recycle()).
        with contextlib.suppress(Exception):
            await asyncio.wait_for(slot.page.close(run_before_unload=False), timeout=5)
        if self._closed or slot.generation != self.generation:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(slot.context.close(), timeout=5)
            return
        try:
            fresh = await asyncio.wait_for(self._new_slot(slot.context), timeout=15)
        except Exception:
            if not self._closed:
                await self.restart("could not open a fresh page")
            return
        if fresh.generation == self.generation and not self._closed:
            self.slots.put_nowait(fresh)
        else:
            with contextlib.suppress(Exception):
                await fresh.context.close()

    async def recycle(self, slot: Slot) -> None:
        """Close a slot and put a fresh one in its place (or restart the browser)."""
        self.stats["recycled_slots"] += 1
        with contextlib.suppress(Exception):
            await asyncio.wait_for(slot.context.close(), timeout=5)
        if slot.generation != self.generation:
            return  # the browser was restarted meanwhile; it made fresh slots
        try:
            self.slots.put_nowait(await asyncio.wait_for(self._new_slot(), timeout=15))
        except Exception:
            await self.restart("could not open a fresh page")

    async def _fill(self) -> None:
        """Open the slots of a fresh browser, learning p5's names on the first."""
        self._health = None
        first = await self._new_slot()
        self.p5_facts = await first.page.evaluate("(api) => window[api].p5Facts()", self.api)
        await self.slots.put(first)
        # One page more than jobs may run at once: each page serves one job, and the spare
        # means the next job need not wait while a used page is replaced.
        for _ in range(self.slot_count):
            await self.slots.put(await self._new_slot())

    async def _new_slot(self, context: BrowserContext | None = None) -> Slot:
        width, height = self.size
        if context is None:
            context = await self.browser.new_context(
                viewport={"width": width, "height": height},
                device_scale_factor=1,
                service_workers="block",
                accept_downloads=False,
            )
        page = await context.new_page()
        slot = Slot(context, page, self.generation)
        page.on("console", lambda msg: slot.note_console(msg.type, msg.text))
        allowed = (
            f"{self.server.origin}/harness.",
            f"{self.server.origin}/lib/",
            f"{self.server.origin}/job/",
            f"{self.server.origin}/favicon.ico",
        )

        def on_request(request: Request) -> None:
            if not request.url.startswith(allowed):
                slot.escapes.append(f"a request to {request.url[:120]}")

        def on_popup(popup: Page) -> None:
            slot.escapes.append(f"a popup window ({popup.url[:120]})")
            task = asyncio.get_running_loop().create_task(popup.close())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

        page.on("request", on_request)
        page.on("popup", on_popup)
        await page.goto(f"{self.server.origin}/harness.html#{self.api}", wait_until="load")
        return slot

    # -- health ------------------------------------------------------------------------------
    async def after_sketch_failure(self, slot: Slot, what: str, last_attempt: bool) -> list[str]:
        """The sketch hung or crashed its page: rebuild the slot, then check the browser.

        Returns the slot's console. Browser healthy: the failure was the sketch's. Browser
        unhealthy: restart it and raise InfraError so the job is retried on a fresh browser.
        If the same sketch wedges the browser again on its last attempt while a fresh browser
        is healthy, the sketch is the cause (heavy GPU work keeps the shared GPU process busy
        after its page is gone).
        """
        console = list(slot.console[:50])
        slot.dead = True
        await self.recycle(slot)
        if await self.healthy():
            return console
        await self.restart(f"unhealthy after a sketch {what}")
        if last_attempt and await self.healthy():
            return console
        raise InfraError(f"the browser stopped answering after a sketch {what}; restarted it")

    async def healthy(self) -> bool:
        """Ping on a page of its own: waiting behind the job queue would measure the backlog."""
        async with self._health_lock:
            for _ in range(2):  # a broken health page is rebuilt once before we give up
                try:
                    if self._health is None:
                        self._health = await asyncio.wait_for(self._new_slot(), timeout=10)
                    ping = self._health.page.evaluate("(api) => window[api].ping()", self.api)
                    return await asyncio.wait_for(ping, timeout=5) == "ok"
                except Exception:
                    old, self._health = self._health, None
                    if old is not None:
                        with contextlib.suppress(Exception):
                            await asyncio.wait_for(old.context.close(), timeout=5)
            return False

    async def restart(self, why: str) -> None:
        """Replace the browser and all its slots (once, however many jobs ask at a time)."""
        generation = self.generation
        async with self._restart_lock:
            if generation != self.generation:
                return  # someone else already restarted it
            self.stats["browser_restarts"] += 1
            old = self.browser
            while not self.slots.empty():
                self.slots.get_nowait()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old.close(), timeout=10)
            self.generation += 1
            try:
                from renderer.recovery import relaunch  # a new driver too, if it died

                args = (self.executable, self.heap_mb, self.server.host, self.env_pixels)
                self.pw, self.browser = await relaunch(
                    self.pw, lambda pw: launch_chromium(pw, *args)
                )
                self.chromium_version = self.browser.version
                await self._fill()
            except Exception as exc:  # noqa: BLE001 - whatever failed, the renderer is down
                cause = f"{type(exc).__name__}: {str(exc)[:200]}"
                self.broken = f"the browser could not be restarted after {why[:120]} ({cause})"
                raise InfraError(self.broken) from None
