"""Loopback HTTP server for the harness page, the pinned libraries and each job's script.

Libraries are served with `Cache-Control: immutable`, so Chromium's HTTP and V8 code caches
work across jobs (Playwright request routing would turn the HTTP cache off). The painting
page and the sketch's Worker each carry a CSP that forbids network access and eval.
"""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from refpool.core.errors import MissingFile
from renderer.brush_patches import served_brush

HERE = Path(__file__).resolve().parent

CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",  # no 'unsafe-eval', no inline: eval/new Function/import() fail
        "connect-src 'none'",
        "img-src 'none'",
        "media-src 'none'",
        "font-src 'none'",
        "style-src 'unsafe-inline'",
        "worker-src 'self'",  # the sketch's own realm: a dedicated Worker from /job/
        "frame-src 'none'",
        "child-src 'none'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    ]
)

# The sketch realm's script runs under its own policy: no eval, no imports, no requests.
WORKER_CSP = "default-src 'none'"

# The canvas is read with toDataURL, never shown: a shown WebGL canvas is copied back from
# the GPU process for the software compositor at every frame, which waits for all its drawing.
HARNESS_HTML = b"""<!doctype html>
<html><head><meta charset="utf-8">
<style>html,body{margin:0;padding:0;background:#fff;overflow:hidden}canvas{display:none!important}</style>
<script src="/lib/acorn.js"></script>
<script src="/harness.js"></script>
<script src="/lib/p5.js"></script>
</head><body></body></html>
"""


def node_modules() -> Path:
    """Where `npm ci` put p5 and p5.brush (override with REFPOOL_NODE_MODULES)."""
    override = os.environ.get("REFPOOL_NODE_MODULES")
    candidates = [Path(override)] if override else []
    candidates += [HERE.parent / "node_modules", Path.cwd() / "node_modules"]
    for path in candidates:
        if (path / "p5.brush" / "package.json").exists():
            return path
    raise MissingFile(
        "p5 and p5.brush are not installed: run `npm ci` in the refpool checkout "
        "(or set REFPOOL_NODE_MODULES to a node_modules folder that has them)"
    )


def library_versions() -> dict[str, str]:
    nm = node_modules()
    return {
        name: json.loads((nm / name / "package.json").read_text())["version"]
        for name in ("p5", "p5.brush")
    }


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a page closed mid-request (e.g. a recycled slot) is routine, not news


class LibServer:
    """Serves /harness.html, /harness.js, /lib/*.js and /job/<token>.js on 127.0.0.1."""

    def __init__(self, *, env_pixels: bool = False) -> None:
        nm = node_modules()
        self.files = {
            "/harness.html": (HARNESS_HTML, "text/html; charset=utf-8"),
            "/harness.js": (
                b"const makeSeededRandom = "
                + (HERE / "seeded_random.js").read_bytes().rstrip()
                + b";\n"
                + (HERE / "harness.js").read_bytes(),
                "text/javascript; charset=utf-8",
            ),
            "/lib/acorn.js": (
                (nm / "acorn" / "dist" / "acorn.js").read_bytes(),
                "text/javascript; charset=utf-8",
            ),
            "/lib/p5.js": (
                (nm / "p5" / "lib" / "p5.min.js").read_bytes(),
                "text/javascript; charset=utf-8",
            ),
            "/lib/p5.brush.js": (
                served_brush(
                    (nm / "p5.brush" / "dist" / "p5.brush.js").read_text(encoding="utf-8"),
                    env_pixels=env_pixels,
                ).encode("utf-8"),
                "text/javascript; charset=utf-8",
            ),
        }
        self.jobs: dict[str, bytes] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                path = self.path.split("?", 1)[0].split("#", 1)[0]
                if path.startswith("/job/"):
                    with server._lock:
                        body = server.jobs.get(path)
                    if body is None:
                        self.send_error(404)
                        return
                    self._send(body, "text/javascript; charset=utf-8", "no-store", WORKER_CSP)
                    return
                entry = server.files.get(path)
                if entry is None:
                    self.send_error(404)
                    return
                body, kind = entry
                cache = (
                    "no-store" if path == "/harness.html" else "public, max-age=31536000, immutable"
                )
                self._send(body, kind, cache, CSP if path == "/harness.html" else None)

            def _send(self, body: bytes, kind: str, cache: str, csp: str | None = None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", cache)
                if csp:  # the painting page's, or the sketch realm's own
                    self.send_header("Content-Security-Policy", csp)
                self.send_header("X-Content-Type-Options", "nosniff")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def job_url(self, token: str) -> str:
        """Where a job's script will be served (its own stack frames name this URL)."""
        return f"{self.origin}/job/{token}.js"

    def add_job(self, url: str, script: bytes) -> None:
        with self._lock:
            self.jobs[url[len(self.origin) :]] = script

    def drop_job(self, url: str) -> None:
        with self._lock:
            self.jobs.pop(url[len(self.origin) :], None)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
