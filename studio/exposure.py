"""What the served studio adds around Gradio's app (a plain ASGI middleware):

* only the studio's own names are answered (`Host`, see studio/hosts.py), and a
  state-changing request from another site (`Origin`) is refused;
* request bodies are limited to BODY_LIMIT bytes (413 with a message);
* every response forbids framing (X-Frame-Options, CSP frame-ancestors) and MIME sniffing;
  under TLS it carries HSTS, and every cookie is `Secure`; cookies are `SameSite=Lax`;
* logging out is a POST from the studio's own page (a cross-site `GET /logout` does nothing);
* there is no upload route: the studio has no upload feature, so the upload endpoints answer
  404 even to a logged-in curator;
* only the studio's own files are served (`served`: curation.files.static_dirs), never
  another app's files in the shared temp folder Gradio also serves from. The page links them
  by name (`/media/png/<sha>.png`, `/reports/draft-<id>.html`: curation.files.MEDIA), so it
  never shows a server path; a name is handed on to Gradio's file route as the file it names
  in those folders, and any other name under those routes is answered 404;
* draft reports are served under a CSP that forbids scripts (they are self-contained HTML);
  a blind studio does not serve them at all (a report built without blinding names models);
* the client's address is published in `CLIENT_ADDRESS` for the login backoff. It is the TCP
  peer, or what a proxy given with `--trusted-proxy` forwards (uvicorn decides, see app.py).
"""

from __future__ import annotations

import contextvars
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from curation.files import is_media_route, media_file
from studio.hosts import STATE_CHANGING, HostRules

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
HSTS = (b"strict-transport-security", b"max-age=31536000")
PAGE_CSP = b"frame-ancestors 'none'"
# A report is one HTML file with inline styles and data: images; it needs nothing else.
REPORT_CSP = (
    b"default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; sandbox"
)
# The largest thing a curator sends is a note (2,000 characters, JSON-escaped) or a grid
# batch; a quarter MiB is far above both and far below what would cost memory.
BODY_LIMIT = 256 * 1024
UPLOAD_PATHS = ("/gradio_api/upload", "/gradio_api/upload_progress", "/upload")
FILE_PREFIXES = ("/gradio_api/file=", "/gradio_api/file/")
LOGOUT_PATHS = ("/logout", "/logout/")
_SAMESITE = re.compile(rb";\s*samesite=[a-z]*", re.IGNORECASE)
_SECURE = re.compile(rb";\s*secure\s*(;|$)", re.IGNORECASE)


def served_file(path: str) -> Path | None:
    """The local file a Gradio file URL asks for, or None for any other route."""
    for prefix in FILE_PREFIXES:
        if path.startswith(prefix):
            try:
                return Path(path[len(prefix) :]).resolve()
            except (OSError, ValueError):
                return Path("/nonexistent")  # unreadable: not one of the studio's files
    return None


def as_file_route(scope: Scope, file: Path) -> Scope:
    """The request for a named file as a request for Gradio's file route, with raw_path
    percent-encoded as a browser would send it."""
    target = file.resolve()
    raw = (FILE_PREFIXES[0] + quote(str(target))).encode("ascii")
    return {**scope, "path": FILE_PREFIXES[0] + str(target), "raw_path": raw}


def is_under(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def route_kind(path: str, reports: Path, blind: bool, served: Sequence[Path] = ()) -> str:
    """'upload' / 'foreign-file' / 'hidden-report' (refused), 'report' (strict CSP), 'page'."""
    if path.rstrip("/") in UPLOAD_PATHS or path.startswith("/gradio_api/upload"):
        return "upload"
    asked = served_file(path)
    if asked is None:
        return "page"
    if is_under(asked, reports):
        return "hidden-report" if blind else "report"
    if not any(is_under(asked, folder) for folder in served):
        return "foreign-file"
    return "page"


def harden_cookie(value: bytes, tls: bool) -> bytes:
    """A Set-Cookie value as `SameSite=Lax` (the studio is never framed, so no cookie needs
    `None`), and `Secure` under TLS."""
    value = _SAMESITE.sub(b"", value) + b"; SameSite=Lax"
    if tls and not _SECURE.search(value):
        value += b"; Secure"
    return value


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


class BodyTooLarge(Exception):
    pass


class ExposureMiddleware:
    """Wraps the studio's FastAPI app; `reports` is the folder draft reports are written to,
    `served` the folders whose files the studio serves, `hosts` the names it answers."""

    def __init__(
        self,
        app: ASGIApp,
        reports: Path,
        blind: bool = False,
        served: Sequence[Path] = (),
        hosts: HostRules | None = None,
        body_limit: int = BODY_LIMIT,
    ) -> None:
        self.app, self.reports, self.blind = app, Path(reports), blind
        # as given, to find the folder a name is in; resolved, to check what a file route asks
        self.folders = [Path(p) for p in served] or [self.reports]
        self.served = [p.resolve() for p in self.folders]
        self.hosts = hosts or HostRules.make("127.0.0.1")
        self.body_limit = body_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        CLIENT_ADDRESS.set(client[0] if client else None)
        host, origin = header(scope, b"host"), header(scope, b"origin")
        if scope["type"] == "websocket":
            if self.hosts.host_ok(host) and self.hosts.origin_ok(origin, host):
                await self.app(scope, receive, send)
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        tls = scope.get("scheme") == "https"
        if is_media_route(scope.get("path", "")):
            named = media_file(self.folders, scope["path"])
            if named is None:
                await _refuse(send, 404, "no such file in the studio", tls=tls)
                return
            scope = as_file_route(scope, named)  # checked below as that file (blind, CSP)
        refusal = self.refusal(scope, host, origin)
        if refusal is not None:
            status, detail, extra = refusal
            await _refuse(send, status, detail, extra, tls=tls)
            return
        path = scope.get("path", "")
        if path in LOGOUT_PATHS:
            scope = {**scope, "method": "GET"}  # Gradio's logout route, reached only by POST
        kind = route_kind(path, self.reports, self.blind, self.served)
        await self.limited(scope, receive, send, REPORT_CSP if kind == "report" else PAGE_CSP, tls)

    def refusal(
        self, scope: Scope, host: str | None, origin: str | None
    ) -> tuple[int, str, list] | None:
        """(status, message, extra headers) for a request refused before Gradio sees it."""
        path, method = scope.get("path", ""), scope.get("method", "GET")
        if not self.hosts.host_ok(host):
            return 421, self.hosts.refusal(host), []
        if method in STATE_CHANGING and not self.hosts.origin_ok(origin, host):
            return (
                403,
                (
                    f"refused a {method} from another site ({origin}): the studio changes"
                    " state only for its own pages; open the studio itself and act there"
                ),
                [],
            )
        length = header(scope, b"content-length")
        if length is not None and (not length.strip().isdigit() or int(length) > self.body_limit):
            return 413, self.too_large(), []
        if path in LOGOUT_PATHS and method != "POST":
            return (
                405,
                "log out with the studio's Log out button (POST /logout)",
                [(b"allow", b"POST")],
            )
        kind = route_kind(path, self.reports, self.blind, self.served)
        if kind == "upload":
            return 404, "this studio takes no uploads", []
        if kind == "hidden-report":
            return 403, "draft reports are not served in blind mode", []
        if kind == "foreign-file":
            return 404, "not one of the studio's files (renders, photos, thumbnails, reports)", []
        return None

    def too_large(self) -> str:
        return (
            f"the request body is larger than the studio accepts ({self.body_limit // 1024}"
            " KiB): shorten the note or select fewer thumbnails; nothing was saved"
        )

    async def limited(
        self, scope: Scope, receive: Receive, send: Send, csp: bytes, tls: bool
    ) -> None:
        """Run Gradio with the body counted as it arrives (a chunked body has no length up
        front) and the studio's headers on every response. Past the limit the 413 goes out
        at once and the app is told the client left, so nothing it parsed is acted on."""
        seen, started, refused = 0, False, False

        async def counted_receive() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.body_limit and not started:
                    refused = True
                    await _refuse(send, 413, self.too_large(), tls=tls)
                    return {"type": "http.disconnect"}
            return message

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 is already out; what the app says after it is dropped
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = studio_headers(message.get("headers", []), csp, tls)
            await send(message)

        try:
            await self.app(scope, counted_receive, send_with_headers)
        except Exception:
            if not refused:
                raise  # the app's own failure; after a 413 it only reports the cut-off body


def studio_headers(headers: list, csp: bytes, tls: bool) -> list:
    kept = [
        (k, harden_cookie(v, tls) if k.lower() == b"set-cookie" else v)
        for k, v in headers
        if k.lower() not in (b"x-frame-options", b"content-security-policy")
    ]
    return [*kept, *FRAME_HEADERS, (b"content-security-policy", csp), *([HSTS] if tls else [])]


async def _refuse(
    send: Send, status: int, detail: str, extra: list | None = None, tls: bool = False
) -> None:
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
                *(extra or []),
                *([HSTS] if tls else []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
