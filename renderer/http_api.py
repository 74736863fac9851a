"""HTTP mode: share one warm renderer with an RL environment (`refpool serve-renderer`).

    POST /render   body: {"source": "...", "seed": 0, "profile": "reference"}
                   (or the raw program as text/javascript, with ?seed=&profile=)
                   -> 200 JSON {accepted, violations, coverage, render_ms, queued_ms, infra_error,
                                cache_key, lib_versions, png_base64}
                   With `Accept: image/png`: the PNG itself, the JSON in `X-Refpool-Result`.
    GET  /health   -> {"ok": true, "lib_versions": {...}, "stats": {...}}

A sketch's rejection is a 200 with accepted=false; our own failure is a 503 with infra_error,
so a client can retry instead of scoring it.
"""

from __future__ import annotations

import base64
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from refpool.core.contracts import Render
from renderer.engine import SyncRenderer

MAX_BODY = 512 * 1024  # a sketch is a few KB; refuse anything absurd before reading it


def render_payload(result: Render, include_png: bool = True) -> dict[str, Any]:
    payload = {
        "accepted": result.accepted,
        "violations": [v.to_dict() for v in result.gate.violations],
        "coverage": result.gate.coverage,
        "render_ms": round(result.render_ms, 1),  # time on a renderer slot
        "queued_ms": round(result.queued_ms, 1),  # time waiting for a free slot
        "infra_error": result.infra_error,
        "cache_key": result.cache_key,
        "program_sha": result.program_sha,
        "seed": result.seed,
        "profile": result.gate.profile,
        "lib_versions": result.lib_versions,
    }
    if include_png:
        payload["png_base64"] = base64.b64encode(result.png).decode() if result.png else None
    return payload


def make_server(
    renderer: SyncRenderer, host: str = "127.0.0.1", port: int = 0
) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            if urlparse(self.path).path != "/health":
                return self._json(404, {"error": "not found; use POST /render or GET /health"})
            inner = renderer.renderer
            self._json(200, {"ok": True, "lib_versions": inner.lib_versions, "stats": inner.stats})

        def do_POST(self) -> None:  # noqa: N802
            url = urlparse(self.path)
            if url.path != "/render":
                return self._json(404, {"error": "not found; POST /render"})
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                return self._json(
                    400, {"error": f"send the program as a body of 1..{MAX_BODY} bytes"}
                )
            body = self.rfile.read(length)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            try:
                if "json" in (self.headers.get("Content-Type") or ""):
                    request = json.loads(body)
                    source = request["source"]
                else:
                    request, source = query, body.decode("utf-8")
                seed = int(request.get("seed", 0))
                profile = request.get("profile") or None
            except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
                return self._json(400, {"error": f"bad request: {exc.__class__.__name__}: {exc}"})
            try:
                result = renderer.render(source, seed=seed, profile=profile)
            except ValueError as exc:  # e.g. an unknown profile
                return self._json(400, {"error": str(exc)})
            status = 503 if result.infra_error else 200
            if "image/png" in (self.headers.get("Accept") or "") and result.png:
                meta = json.dumps(render_payload(result, include_png=False))
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(result.png)))
                self.send_header("X-Refpool-Result", meta)
                self.end_headers()
                self.wfile.write(result.png)
                return
            self._json(status, render_payload(result))

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
