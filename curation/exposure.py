"""What the served studio adds around Gradio's app (a plain ASGI middleware):

* every response forbids framing (X-Frame-Options, CSP frame-ancestors) and MIME sniffing;
* there is no upload route: the studio has no upload feature, so the upload endpoints answer
  404 even to a logged-in curator;
* draft reports are served under a CSP that forbids scripts (they are self-contained HTML);
  a blind studio does not serve them at all (a report built without blinding names models);
* the client's address is published in `CLIENT_ADDRESS` for the login backoff.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CLIENT_ADDRESS: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "refpool_client_address", default=None
)
FRAME_HEADERS = [
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]
PAGE_CSP = b"frame-ancestors 'none'"
# A report is one HTML file with inline styles and data: images; it needs nothing else.
REPORT_CSP = (
    b"default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; sandbox"
)
UPLOAD_PATHS = ("/gradio_api/upload", "/gradio_api/upload_progress", "/upload")
FILE_PREFIXES = ("/gradio_api/file=", "/gradio_api/file/")


def served_file(path: str) -> Path | None:
    """The local file a Gradio file URL asks for, or None for any other route."""
    for prefix in FILE_PREFIXES:
        if path.startswith(prefix):
            try:
                return Path(path[len(prefix) :]).resolve()
            except (OSError, ValueError):
                return None
    return None


def is_under(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def route_kind(path: str, reports: Path, blind: bool) -> str:
    """'upload' (refused), 'hidden-report' (refused), 'report' (strict CSP) or 'page'."""
    if path.rstrip("/") in UPLOAD_PATHS or path.startswith("/gradio_api/upload"):
        return "upload"
    asked = served_file(path)
    if asked is not None and is_under(asked, reports):
        return "hidden-report" if blind else "report"
    return "page"


class ExposureMiddleware:
    """Wraps the studio's FastAPI app; `reports` is the folder draft reports are written to."""

    def __init__(self, app: ASGIApp, reports: Path, blind: bool = False) -> None:
        self.app, self.reports, self.blind = app, Path(reports), blind

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        CLIENT_ADDRESS.set(client[0] if client else None)
        kind = route_kind(scope.get("path", ""), self.reports, self.blind)
        if kind == "upload":
            await _refuse(send, 404, "this studio takes no uploads")
            return
        if kind == "hidden-report":
            await _refuse(send, 403, "draft reports are not served in blind mode")
            return
        csp = REPORT_CSP if kind == "report" else PAGE_CSP

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() not in (b"x-frame-options", b"content-security-policy")
                ]
                message["headers"] = [*headers, *FRAME_HEADERS, (b"content-security-policy", csp)]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *FRAME_HEADERS,
                (b"content-security-policy", PAGE_CSP),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
