"""Bringing the browser back: a new Chromium, and a new Playwright driver if the old one died.

A dead driver (killed, out of memory) fails every call with "Connection closed"; the pool then
starts a new driver. The old driver's pending futures still hold that error, and asyncio would
print each one as "Future exception was never retrieved" when it is collected: noise after a
failure we already handled, so the loop's handler drops exactly those.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Browser, Playwright

DEAD_DRIVER = "Connection closed while reading from the driver"


async def relaunch(
    pw: Playwright, launch: Callable[[Playwright], Awaitable[Browser]]
) -> tuple[Playwright, Browser]:
    """(driver, browser) from `launch(driver)`: the same driver if it answers, else a new one."""
    try:
        return pw, await launch(pw)
    except Exception:  # noqa: BLE001 - a dead driver fails every call: start another
        from playwright.async_api import async_playwright

        _quiet_dead_driver(asyncio.get_running_loop())
        with contextlib.suppress(Exception):
            await asyncio.wait_for(pw.stop(), timeout=10)
        fresh = await async_playwright().start()
        return fresh, await launch(fresh)


def _quiet_dead_driver(loop: asyncio.AbstractEventLoop) -> None:
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if DEAD_DRIVER in str(context.get("exception", "")):
            return  # the replaced driver's leftovers
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
