"""The studio's outermost ASGI layer: same-origin only, only the routes its page uses, and a
bounded share of the server for visitors who have not logged in.

app.py wraps the app Gradio builds with `StudioGuard` at the uvicorn level, outside Gradio's
own middleware (its CORS layer would otherwise answer preflights and grant origins first):

* **Same origin.** A request whose `Origin` is not the studio's own (or an --allowed-host
  name's), or whose `Sec-Fetch-Site` says another site or another origin of this site (a
  local dev server or notebook on another port is "same-site"), is refused with 403, reads
  included. Only a top-level navigation to the page itself may come from elsewhere (a link
  in a chat): nothing of it is readable by the page that made it (framing is forbidden).
  Requests without these headers (curl, scripts) are not from a browser page and pass.
  Responses never carry a CORS grant (Access-Control-Allow-*): the studio shares nothing.
* **Only the studio's routes** (`ROUTES`, found by watching the studio's own page and the
  Python client at work): everything else Gradio serves (API docs, /openapi.json, cancel,
  reset, monitoring, dev reload, /gradio_api/token and /user, uploads, heartbeats...) is 404,
  before login and after. Routes marked `SESSION` need a live session when login is on.
* **Bounded before login.** With login on, requests without a live session share
  `ANONYMOUS_SLOTS` slots (503 at once when all are taken) and each must finish within
  `ANONYMOUS_DEADLINE` seconds; a logged-in curator's requests take no slot and have no
  deadline. Logins take no slot either: they wait in the login's fair queue (studio/login.py).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from curation.sessions import SessionTable
from studio.exposure import ASGIApp, Message, Receive, Scope, Send, header
from studio.exposure import _refuse as refuse_with_headers
from studio.hosts import HostRules

Access = Literal["public", "session"]
PUBLIC: Access = "public"
SESSION: Access = "session"
READ = frozenset({"GET", "HEAD"})
POST = frozenset({"POST"})


@dataclass(frozen=True)
class Route:
    path: str  # exact, or a prefix when it ends with "/" or "="
    methods: frozenset[str]
    access: Access

    def matches(self, path: str, method: str) -> bool:
        if method not in self.methods:
            return False
        if self.path.endswith(("/", "=")) and self.path != "/":
            return path.startswith(self.path)
        return path == self.path or path == self.path + "/"


# Every route the studio's page (the real browser tests) and gradio_client (the tests, the
# page's "Use via API" link) use; nothing else of Gradio's is reachable.
ROUTES: tuple[Route, ...] = (
    Route("/", READ, PUBLIC),  # the page, or the login form before login
    Route("/login", POST, PUBLIC),
    Route("/assets/", READ, PUBLIC),  # Gradio's scripts, styles and fonts
    Route("/static/", READ, PUBLIC),
    Route("/theme.css", READ, PUBLIC),
    Route("/favicon.ico", READ, PUBLIC),
    Route("/gradio_api/startup-events", READ, PUBLIC),  # Gradio's own call at launch
    Route("/logout", READ | POST, SESSION),  # GET is answered 405 (studio/exposure.py)
    Route("/config", READ, SESSION),
    Route("/gradio_api/info", READ, SESSION),
    Route("/gradio_api/run/", POST, SESSION),  # every studio action (queue=False)
    Route("/gradio_api/queue/join", POST, SESSION),  # queued events (the Pool tab, the client)
    Route("/gradio_api/queue/data", READ, SESSION),
    Route("/media/", READ, SESSION),  # renders, photos, thumbnails (curation/files.py)
    Route("/reports/", READ, SESSION),  # draft reports
    Route("/gradio_api/file=", READ, SESSION),  # the same files by path (exposure.py checks)
    Route("/gradio_api/file/", READ, SESSION),
)
ANONYMOUS_SLOTS = 64  # requests in flight at once from visitors without a session
ANONYMOUS_DEADLINE = 30.0  # seconds a visitor's request may take, its response included
CORS_HEADERS = (b"access-control-",)


def find_route(path: str, method: str) -> Route | None:
    return next((r for r in ROUTES if r.matches(path, method)), None)


def is_navigation_to_page(scope: Scope) -> bool:
    """A top-level GET of the page (a link followed from elsewhere), which no page can read."""
    return (
        scope.get("method") in READ
        and scope.get("path") == "/"
        and header(scope, b"sec-fetch-mode") == "navigate"
        and header(scope, b"sec-fetch-dest") == "document"
    )


def foreign_request(scope: Scope, hosts: HostRules) -> str | None:
    """Why a request comes from a page that is not the studio's own, or None."""
    origin, site = header(scope, b"origin"), header(scope, b"sec-fetch-site")
    if origin is not None and not hosts.origin_ok(origin, header(scope, b"host")):
        return f"Origin {origin}"
    if site in ("cross-site", "same-site") and not is_navigation_to_page(scope):
        return f"Sec-Fetch-Site {site}"
    return None


class StudioGuard:
    """Wraps the app Gradio builds; `login` says whether the studio requires login."""

    def __init__(
        self,
        app: ASGIApp,
        hosts: HostRules,
        sessions: SessionTable,
        login: bool,
        slots: int = ANONYMOUS_SLOTS,
        deadline: float = ANONYMOUS_DEADLINE,
    ) -> None:
        self.app, self.hosts, self.sessions, self.login = app, hosts, sessions, login
        self.slots, self.deadline = slots, deadline
        self.anonymous = 0  # requests in flight without a session (one event loop: no lock)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # the studio uses none
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope.get("path", ""), scope.get("method", "GET")
        if not self.hosts.host_ok(header(scope, b"host")):  # a rebound name: see hosts.py
            await refuse(scope, send, 421, self.hosts.refusal(header(scope, b"host")))
            return
        foreign = foreign_request(scope, self.hosts)
        if foreign is not None:
            await refuse(scope, send, 403, refused_foreign(foreign))
            return
        route = find_route(path, method)
        if route is None:
            await refuse(scope, send, 404, NOT_A_ROUTE)
            return
        if not self.login or self.sessions.has_session(header(scope, b"cookie")):
            await self.app(scope, receive, no_cors(send))
            return
        if route.access == SESSION:
            await refuse(scope, send, 401, "log in first: this studio requires a curator account")
            return
        await self.anonymous_call(scope, receive, send, counted=path.rstrip("/") != "/login")

    async def anonymous_call(
        self, scope: Scope, receive: Receive, send: Send, counted: bool
    ) -> None:
        """A visitor's request: a slot (unless it is a login, which has its own fair queue)
        and a deadline; past it, the connection is dropped (uvicorn closes it)."""
        if counted and self.anonymous >= self.slots:
            await refuse(scope, send, 503, BUSY, [(b"retry-after", b"5")])
            return
        self.anonymous += counted
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await no_cors(send)(message)

        try:
            async with asyncio.timeout(self.deadline):
                await self.app(scope, receive, tracked)
        except TimeoutError:
            if not started:
                await refuse(scope, send, 503, BUSY, [(b"retry-after", b"5")])
        finally:
            self.anonymous -= counted


NOT_A_ROUTE = (
    "not a route of this studio: it serves its own page, its files and the calls its page"
    " makes (no uploads, no API docs, no monitoring)"
)
BUSY = (
    "the studio is busy with requests from visitors who have not logged in; try again in a few"
    " seconds (curators already logged in are not affected)"
)


def refused_foreign(why: str) -> str:
    return (
        f"refused a request from another site or another port ({why}): the studio answers"
        " only its own pages; open the studio itself and act there"
    )


def no_cors(send: Send) -> Send:
    """`send` without any CORS grant in the response headers."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [
                (k, v)
                for k, v in message.get("headers", [])
                if not k.lower().startswith(CORS_HEADERS)
            ]
        await send(message)

    return sending


async def refuse(
    scope: Scope, send: Send, status: int, detail: str, extra: list | None = None
) -> None:
    """A JSON refusal with the studio's usual headers (HSTS under TLS)."""
    await refuse_with_headers(send, status, detail, extra, tls=scope.get("scheme") == "https")
