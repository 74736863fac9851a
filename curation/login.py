"""Login for an exposed studio: password checks that resist guessing.

* Backoff per curator name and per client address: after a few failures in a row every
  further attempt is refused, without checking the password, until a lock expires; each
  failure past the threshold doubles the lock (capped). An attempt counts as a failure from
  the moment it starts until it succeeds; a success clears the name's and address's record.
  At most MAX_WAITING logins wait for hashing at once; more are refused (HTTP 429).
* Unknown names (and names without a password) are verified against a dummy hash, so the
  time a refusal takes does not tell real names from unknown ones.
* scrypt runs in its own worker thread, one hash at a time and at a lower CPU priority, never
  on the server's event loop, so a flood of logins cannot stall other curators' requests.

`LoginGuard` is plain bookkeeping with an injectable clock; `make_auth` turns it into the
async callable Gradio's login route awaits. The client address comes from
`curation.exposure.CLIENT_ADDRESS`, set by the studio's ASGI middleware.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from curation import curators
from refpool.core.errors import RefpoolError
from refpool.core.store import Store

NAME_LIMIT = 5  # failures in a row before a name is locked
ADDRESS_LIMIT = 20  # failures in a row before an address is locked (a team may share one)
FIRST_LOCK = 2.0  # seconds; doubles with each further failure
MAX_LOCK = 900.0


class LockedOut(RefpoolError):
    """Too many failed logins: refused without checking the password."""

    def __init__(self, what: str, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(
            f"too many failed logins for this {what}; try again in {max(1, round(seconds))} s"
        )


@dataclass
class _Record:
    failures: int = 0
    locked_until: float = 0.0


@dataclass
class LoginGuard:
    name_limit: int = NAME_LIMIT
    address_limit: int = ADDRESS_LIMIT
    first_lock: float = FIRST_LOCK
    max_lock: float = MAX_LOCK
    clock: Callable[[], float] = time.monotonic
    names: dict[str, _Record] = field(default_factory=dict)
    addresses: dict[str, _Record] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def check(self, name: str, address: str | None) -> None:
        """Raise LockedOut when the name or the address is locked right now."""
        now = self.clock()
        with self._lock:
            for what, table, key in (
                ("address", self.addresses, address),
                ("name", self.names, name),
            ):
                rec = table.get(key or "")
                if key is not None and rec and rec.locked_until > now:
                    raise LockedOut(what, rec.locked_until - now)

    def failed(self, name: str, address: str | None) -> None:
        now = self.clock()
        with self._lock:
            for table, key, limit in (
                (self.names, name, self.name_limit),
                (self.addresses, address, self.address_limit),
            ):
                if key is None:
                    continue
                rec = table.setdefault(key, _Record())
                rec.failures += 1
                if rec.failures >= limit:
                    over = rec.failures - limit
                    rec.locked_until = now + min(self.max_lock, self.first_lock * 2**over)
            if len(self.names) > 100_000:  # a flood of made-up names must not grow forever
                self.names = {k: v for k, v in self.names.items() if v.locked_until > now}

    def begin(self, name: str, address: str | None) -> None:
        """Start an attempt: refuse it when locked, else count it as a failure until it
        succeeds. Counting up front means a flood cannot queue hundreds of guesses behind
        the hashing thread before the first ones have failed."""
        with self._lock:
            self.check(name, address)
            self.failed(name, address)

    def succeeded(self, name: str, address: str | None) -> None:
        with self._lock:
            self.names.pop(name, None)
            if address is not None:
                self.addresses.pop(address, None)


def _lower_priority() -> None:
    """Runs in the hashing thread: on Linux a thread id works as a process id here, so only
    this thread is niced; elsewhere the call fails and hashing keeps the normal priority."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


# One thread of its own: a flood of logins queues here while requests go on elsewhere.
HASH_THREAD_PREFIX = "refpool-login-hash"
_HASHING = ThreadPoolExecutor(1, thread_name_prefix=HASH_THREAD_PREFIX, initializer=_lower_priority)
MAX_WAITING = 16  # logins queued for hashing; beyond this (a flood from many addresses) refuse
_waiting = [0]
_waiting_lock = threading.Lock()


def check_password(store: Store, name: str, password: str) -> bool:
    """The same scrypt work whether or not the curator exists (see curators.authenticate)."""
    return curators.authenticate(store, name, password)


def make_auth(
    store: Store, guard: LoginGuard, address: Callable[[], str | None]
) -> Callable[[str, str], Awaitable[bool]]:
    """The async `auth` callable for `Blocks.launch`: backoff, then scrypt off the event loop.

    A locked name or address is refused with HTTP 429 and a message saying when to retry.
    """
    from fastapi import HTTPException  # only the served studio needs it

    async def auth(username: str, password: str) -> bool:
        name, client = (username or "").strip(), address()
        with _waiting_lock:
            busy = _waiting[0] >= MAX_WAITING
            if not busy:
                _waiting[0] += 1
        if busy:
            raise HTTPException(429, detail="too many logins at once; try again in a few seconds")
        try:
            guard.begin(name, client)
            loop = asyncio.get_running_loop()
            ok = await loop.run_in_executor(_HASHING, check_password, store, name, password or "")
        except LockedOut as exc:
            raise HTTPException(status_code=429, detail=str(exc)) from exc
        finally:
            with _waiting_lock:
                _waiting[0] -= 1
        if ok:
            guard.succeeded(name, client)
        return ok

    return auth
