"""Connection limits for the studio's server (uvicorn, h11), so that nobody can hold its
connections (and file descriptors) without sending a request.

uvicorn starts its keep-alive timer only after a response, and stops it at the first byte of
the next request: a connection that sends nothing, or a header a byte at a time, stays open
for ever. `BoundedProtocol` adds:

* a request deadline (`REQUEST_TIMEOUT`): from the moment a connection waits for a request
  (opened, or kept alive after a response) its headers and body must arrive within it, or
  the connection is closed;
* a cap on connections waiting for a request (`waiting_cap`, a quarter of the process's file
  limit, at most 512): past it the one that has waited longest is closed, so a flood of idle
  connections never keeps a curator's new connection out (hers sends its request at once).

`studio_server` hands these to the uvicorn server Gradio creates in `launch`, with the
keep-alive timeout and h11's limit on the size of a request's head, and wraps Gradio's app
(outermost: studio/guard.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from studio.exposure import ASGIApp

REQUEST_TIMEOUT = 10.0  # seconds for a request's headers and body to arrive
KEEP_ALIVE = 5  # seconds an idle kept-alive connection stays open (uvicorn's timeout_keep_alive)
MAX_HEAD = 16 * 1024  # bytes of request line and headers h11 will buffer (431/400 past it)
MAX_WAITING = 512


def waiting_cap() -> int:
    """Connections allowed to wait for a request: a quarter of the file limit, 16 to 512."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_WAITING
    return max(16, min(MAX_WAITING, soft // 4))


class BoundedProtocol(H11Protocol):
    """uvicorn's h11 protocol with a request deadline and a cap on waiting connections."""

    request_timeout: float = REQUEST_TIMEOUT
    max_waiting: int = MAX_WAITING
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_waiting()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._request_in():
            self._stop_waiting()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self._request_in():
            self._start_waiting()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._stop_waiting()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _request_in(self) -> bool:
        """The current request's head and body have both arrived (or none is expected)."""
        return self.conn.their_state not in (h11.IDLE, h11.SEND_BODY)

    def _waiting(self) -> OrderedDict[BoundedProtocol, None]:
        """This server's connections waiting for a request, oldest first."""
        waiting = getattr(self.server_state, "refpool_waiting", None)
        if waiting is None:
            waiting = OrderedDict()
            self.server_state.refpool_waiting = waiting  # type: ignore[attr-defined]
        return waiting

    def _start_waiting(self) -> None:
        self._stop_waiting()
        waiting = self._waiting()
        waiting[self] = None
        self._deadline = self.loop.call_later(self.request_timeout, self._close_waiting)
        while len(waiting) > self.max_waiting:
            next(iter(waiting))._close_waiting()  # the longest wait makes room

    def _stop_waiting(self) -> None:
        self._waiting().pop(self, None)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _close_waiting(self) -> None:
        self._stop_waiting()
        if not self.transport.is_closing():
            self.transport.close()


def bounded_protocol(request_timeout: float, max_waiting: int) -> type[BoundedProtocol]:
    """A protocol class with these limits (uvicorn makes one instance per connection)."""
    return type(
        "StudioProtocol",
        (BoundedProtocol,),
        {"request_timeout": request_timeout, "max_waiting": max_waiting},
    )


@contextlib.contextmanager
def studio_server(wrap: Callable[[ASGIApp], ASGIApp]) -> Iterator[None]:
    """While Gradio creates its uvicorn server (in `Blocks.launch`): wrap the app it serves
    with `wrap`, and bound its connections. Gradio exposes none of these settings; it builds
    `uvicorn.Config(app=..., ...)` itself, so that call is intercepted for the duration."""
    original = uvicorn.Config
    protocol = bounded_protocol(REQUEST_TIMEOUT, waiting_cap())  # read now: tests set them

    def config(*args: Any, **kwargs: Any) -> uvicorn.Config:
        kwargs["app"] = wrap(kwargs["app"])
        kwargs.update(
            http=protocol, timeout_keep_alive=KEEP_ALIVE, h11_max_incomplete_event_size=MAX_HEAD
        )
        return original(*args, **kwargs)

    setattr(uvicorn, "Config", config)  # noqa: B010 - the module attribute Gradio calls
    try:
        yield
    finally:
        setattr(uvicorn, "Config", original)  # noqa: B010
