"""A client of `refpool serve-renderer` with the Renderer's interface.

    client = RenderClient("http://127.0.0.1:8765")
    result = await client.render(source, seed=7)     # -> contracts.Render, as Renderer.render

So `refpool generate --renderer URL` (and anything else written against `Renderer.render`)
renders through the service unchanged. A full queue (503 with Retry-After) is waited out as
the server asks, up to `patience_s`; an unreachable or lost service becomes a Render with
`infra_error` (never a verdict on the sketch); a request the server refuses as malformed
(413/422) raises InputError with the server's message.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from refpool.core.contracts import Render
from refpool.core.errors import InputError
from renderer.http_api import RenderRequest, infra_render, render_of

CONNECT_ATTEMPTS = 3  # a restarting service gets a few seconds to come back


class RenderClient:
    def __init__(self, url: str, *, timeout_s: float = 180.0, patience_s: float = 600.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s  # one request: the render's deadline, retries and queueing
        self.patience_s = patience_s  # how long a full queue is waited out in all

    def _client(self) -> httpx.AsyncClient:
        # One per request: a client is bound to its event loop, and callers (the env's
        # asyncio.run per step, a batch) come from many; a loopback connect costs nothing
        # next to a render.
        return httpx.AsyncClient(timeout=self.timeout_s)

    async def render(self, source: str, seed: int = 0, profile: Any = None) -> Render:
        """Render through the service. Never raises for the sketch; see Render.infra_error."""
        name = getattr(profile, "name", profile)  # a Profile or its name, as Renderer takes
        try:
            request = RenderRequest(source=source, seed=seed, profile=name)
        except ValueError as exc:  # pydantic's ValidationError: the same check the server makes
            raise InputError(f"not a render request: {exc}") from None
        give_up = time.monotonic() + self.patience_s
        failures = 0
        while True:
            try:
                async with self._client() as client:
                    reply = await client.post(
                        f"{self.url}/render", json=request.model_dump(exclude_none=True)
                    )
            except httpx.TransportError as exc:
                failures += 1
                if failures >= CONNECT_ATTEMPTS:
                    message = f"the render service at {self.url} could not be reached: {exc!r}"
                    return infra_render(source, seed, name, message)
                await asyncio.sleep(failures)
                continue
            body = _json(reply)
            if reply.status_code in (413, 422):
                raise InputError(f"the render service refused the request: {body.get('error')}")
            if "png_base64" in body:  # a render: accepted, rejected, or our own failure (503)
                return render_of(body)
            wait = _retry_after(reply)
            if reply.status_code == 503 and wait is not None and time.monotonic() + wait < give_up:
                await asyncio.sleep(wait)  # the queue is full: come back when the server says
                continue
            message = f"the render service answered HTTP {reply.status_code}: {body.get('error')}"
            return infra_render(source, seed, name, message)

    async def health(self) -> dict[str, Any]:
        async with self._client() as client:
            return _json(await client.get(f"{self.url}/healthz"))

    async def close(self) -> None:
        """Nothing is held between requests; here for the Renderer's interface."""


def _json(reply: httpx.Response) -> dict[str, Any]:
    try:
        data = reply.json()
    except ValueError:
        return {"error": reply.text[:300]}
    return data if isinstance(data, dict) else {"error": str(data)[:300]}


def _retry_after(reply: httpx.Response) -> float | None:
    value = reply.headers.get("retry-after", "")
    return float(value) if value.replace(".", "", 1).isdigit() else None
