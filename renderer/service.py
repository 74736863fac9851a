"""`refpool serve-renderer`: the renderer as an HTTP service (FastAPI on uvicorn).

    POST /render    a RenderRequest (renderer/http_api.py) -> a RenderReply
    GET  /healthz   200 when the renderer can take work, 503 otherwise
    GET  /metrics   Prometheus text: renders by outcome, queue depth, render time histogram

Admission is bounded: at most `slots + queue` renders are admitted at once; one more gets a
503 with `Retry-After` at once, never an unbounded wait. On SIGTERM uvicorn stops accepting
and the renders already admitted finish and are answered before the renderer closes.

The same app fronts one local Renderer (`LocalBackend`) or Ray Serve replicas
(renderer/ray_serve.py): a backend is anything with `start`, `close`, `health` and
`async render(source, seed, profile) -> Render`.
"""

from __future__ import annotations

import json
import math
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import ValidationError

from refpool.core.contracts import Render
from renderer.http_api import MAX_BODY_BYTES, MAX_SOURCE_CHARS, RenderRequest, reply_of
from renderer.metrics import Metrics


class Backend(Protocol):
    slots: int

    async def start(self) -> None: ...
    async def close(self) -> None: ...
    async def health(self) -> dict[str, Any]: ...
    async def render(self, source: str, seed: int, profile: str | None) -> Render: ...


class LocalBackend:
    """One Renderer (one browser, `slots` pages) on the server's own event loop."""

    def __init__(self, config: Any) -> None:
        from renderer import Renderer

        self.renderer = Renderer(config)
        self.slots = config.slots

    async def start(self) -> None:
        await self.renderer.start()

    async def close(self) -> None:
        await self.renderer.close()

    async def health(self) -> dict[str, Any]:
        try:
            ok = self.renderer.pool.connected
        except Exception:  # noqa: BLE001 - not started, or the browser is gone: not healthy
            ok = False
        return {
            "ok": ok,
            "lib_versions": self.renderer.lib_versions,
            "slots": self.slots,
            "env_pixels": self.renderer.config.env_pixels,  # which 2D rasteriser paints
        }

    async def render(self, source: str, seed: int, profile: str | None) -> Render:
        return await self.renderer.render(source, seed=seed, profile=profile)


@dataclass
class Limits:
    queue: int = 8  # renders admitted beyond the busy slots; more are refused with a 503


class BodyTooLarge(Exception):
    pass


def build_app(backend: Backend, limits: Limits | None = None, announce: str = "") -> FastAPI:
    """The service around `backend`. `announce` is printed once the backend is ready."""
    limits = limits or Limits()
    metrics = Metrics(slots=backend.slots)
    capacity = backend.slots + limits.queue

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await backend.start()
        if announce:
            print(announce, flush=True)
        try:
            yield
        finally:  # uvicorn gets here only after the renders in flight were answered
            await backend.close()

    app = FastAPI(title="refpool renderer", lifespan=lifespan)

    @app.get("/healthz")
    @app.get("/health")
    async def healthz() -> JSONResponse:
        state = await backend.health()
        state.update(admitted=metrics.admitted, capacity=capacity)
        return JSONResponse(state, status_code=200 if state.get("ok") else 503)

    @app.get("/metrics")
    async def prometheus() -> PlainTextResponse:
        return PlainTextResponse(metrics.text(), media_type="text/plain; version=0.0.4")

    @app.post(
        "/render",
        openapi_extra={
            "requestBody": {
                "content": {
                    "application/json": {"schema": RenderRequest.model_json_schema()},
                    "text/javascript": {"schema": {"type": "string"}},
                }
            }
        },
    )
    async def render(request: Request) -> Response:
        try:
            job = RenderRequest.model_validate(await _request_data(request))
        except BodyTooLarge:
            limit = f"{MAX_SOURCE_CHARS} characters ({MAX_BODY_BYTES} bytes of body)"
            return _error(413, f"the request body is over the limit of {limit}", "source")
        except ValidationError as exc:
            return _invalid(exc)
        except ValueError as exc:
            return _error(422, f"the body is not a render request: {exc}", "body")
        if metrics.admitted >= capacity:
            metrics.refused += 1
            wait = max(1, math.ceil(metrics.mean_render_s() * (metrics.admitted / backend.slots)))
            message = f"the renderer is busy ({capacity} renders admitted); retry in {wait} s"
            return JSONResponse(
                {"error": message}, status_code=503, headers={"Retry-After": str(wait)}
            )
        metrics.admitted += 1
        try:
            result = await backend.render(job.source, job.seed, job.profile)
        finally:
            metrics.admitted -= 1
        metrics.observe(result)
        status = 503 if result.infra_error else 200
        headers = {"Retry-After": "1"} if result.infra_error else {}
        if "image/png" in request.headers.get("accept", "") and result.png:
            meta = reply_of(result, include_png=False).model_dump_json()
            headers["X-Refpool-Result"] = meta
            return Response(result.png, status_code=status, media_type="image/png", headers=headers)
        return JSONResponse(reply_of(result).model_dump(), status_code=status, headers=headers)

    return app


async def _request_data(request: Request) -> dict[str, Any]:
    """The request as a dict: a JSON body, or a raw program with ?seed=&profile=."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():  # counted as it arrives: a chunked body is bounded too
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise BodyTooLarge
    if "json" in request.headers.get("content-type", ""):
        try:
            parsed = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"invalid JSON ({exc})") from None
        if not isinstance(parsed, dict):
            raise ValueError('send a JSON object such as {"source": "...", "seed": 0}')
        return parsed
    query = {k: v[-1] for k, v in parse_qs(request.url.query).items()}
    try:
        source = bytes(body).decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the program is not UTF-8 text") from None
    data: dict[str, Any] = {"source": source}
    if "seed" in query:
        data["seed"] = int(query["seed"]) if query["seed"].isdigit() else query["seed"]
    if query.get("profile"):
        data["profile"] = query["profile"]
    return data


def _invalid(exc: ValidationError) -> JSONResponse:
    """A 422 that names each bad field and what it should be."""
    problems = [
        {"field": ".".join(str(p) for p in e["loc"]) or "body", "problem": e["msg"]}
        for e in exc.errors(include_url=False, include_input=False)
    ]
    message = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
    return JSONResponse({"error": f"bad render request: {message}", "fields": problems}, 422)


def _error(status: int, message: str, field: str) -> JSONResponse:
    return JSONResponse(
        {"error": message, "fields": [{"field": field, "problem": message}]}, status
    )


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, bound before the server starts so its real port can be printed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def serve(backend: Backend, host: str, port: int, limits: Limits, drain_s: float) -> None:
    """Serve until SIGTERM/SIGINT; renders in flight get `drain_s` to finish."""
    import uvicorn

    sock = bind(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    url = f"http://{bound_host}:{bound_port}"
    announce = f"renderer serving on {url}  (POST /render, GET /healthz, GET /metrics)"
    app = build_app(backend, limits, announce)
    config = uvicorn.Config(
        app,
        log_level="warning",
        timeout_graceful_shutdown=int(drain_s),
        lifespan="on",
        loop="asyncio",  # Playwright drives the browser on this loop: the stock asyncio one
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    if server.started is False:
        print("error: the renderer service did not start", file=sys.stderr)
