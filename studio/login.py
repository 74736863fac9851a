"""Login for an exposed studio: password checks that resist guessing.

* Backoff per curator name and per client address: after a few failures in a row every
  further attempt is refused, without checking the password, until a lock expires; each
  failure past the threshold doubles the lock (capped). An attempt counts as a failure from
  the moment it starts until it succeeds; a success clears the name's and address's record.
  Names are keyed as authentication compares them (`curators.name_key`: José in NFD, JOSÉ
  and José are one locked name); IPv6 addresses by their /64 (one host usually holds a /64).
* Waiting for the hash is shared fairly between addresses (`WaitingRoom`): each address may
  have its share of MAX_WAITING logins waiting, and an address with none waiting always gets
  in, so a flood from some addresses never refuses a curator on another (HTTP 429 only for
  the address that is over its share).
* Unknown names (and names without a password) are verified against a dummy hash, so the
  time a refusal takes does not tell real names from unknown ones.
* scrypt runs in its own worker thread, one hash at a time and at a lower CPU priority, never
  on the server's event loop, so a flood of logins cannot stall other curators' requests.
  Waiting logins are hashed best standing first (`HashQueue`): an address with fewer failed
  logins goes ahead, so a flood from many addresses (each soon with failures to its name)
  waits behind a curator whose address has none, instead of in front of her.

`LoginGuard` is plain bookkeeping with an injectable clock; `make_auth` turns it into the
async callable Gradio's login route awaits. The client address comes from
`studio.exposure.CLIENT_ADDRESS`, set by the studio's ASGI middleware.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import ipaddress
import itertools
import os
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from curation import curators
from refpool.core.errors import RefpoolError
from refpool.core.store import Store

NAME_LIMIT = 5  # failures in a row before a name is locked
ADDRESS_LIMIT = 20  # failures in a row before an address is locked (a team may share one)
FIRST_LOCK = 2.0  # seconds; doubles with each further failure
MAX_LOCK = 900.0


def address_key(address: str | None) -> str | None:
    """The key an address is limited under: itself, or its /64 for IPv6."""
    if address is None:
        return None
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


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
        name, address = curators.name_key(name), address_key(address)
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
        name, address = curators.name_key(name), address_key(address)
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
            if len(self.addresses) > 100_000:  # nor one from many addresses
                self.addresses = {k: v for k, v in self.addresses.items() if v.locked_until > now}

    def begin(self, name: str, address: str | None) -> None:
        """Start an attempt: refuse it when locked, else count it as a failure until it
        succeeds. Counting up front means a flood cannot queue hundreds of guesses behind
        the hashing thread before the first ones have failed."""
        with self._lock:
            self.check(name, address)
            self.failed(name, address)

    def standing(self, address: str | None) -> int:
        """The address's failed logins in a row (0 for a clean or unknown address)."""
        key = address_key(address)
        with self._lock:
            rec = self.addresses.get(key or "")
            return rec.failures if key is not None and rec else 0

    def succeeded(self, name: str, address: str | None) -> None:
        name, address = curators.name_key(name), address_key(address)
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


class HashQueue:
    """One hashing thread taking the waiting job with the lowest priority number first (then
    the oldest): a login's priority is its address's failures in a row, so a clean address
    is never queued behind a flood's guesses. A job whose caller gave up is skipped."""

    def __init__(self) -> None:
        self._waiting: list[tuple[int, int, Callable[[], bool], Future[bool]]] = []
        self._ready = threading.Condition()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def submit(self, priority: int, job: Callable[[], bool]) -> Future[bool]:
        future: Future[bool] = Future()
        with self._ready:
            heapq.heappush(self._waiting, (priority, next(self._order), job, future))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name=f"{HASH_THREAD_PREFIX}_0", daemon=True
                )
                self._thread.start()
            self._ready.notify()
        return future

    def _work(self) -> None:
        _lower_priority()
        while True:
            with self._ready:
                while not self._waiting:
                    self._ready.wait()
                *_, job, future = heapq.heappop(self._waiting)
            if not future.set_running_or_notify_cancel():
                continue  # the client left while it waited
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the awaiting login
                future.set_exception(exc)


_HASHING = HashQueue()
MAX_WAITING = 16  # logins queued for hashing, shared out between the addresses waiting


class WaitingRoom:
    """Logins waiting for the hashing thread, counted per address. An address may hold
    max(1, capacity // addresses waiting) of them: the CPU sees at most about `capacity`
    hashes queued (plus one per further address, each of which its own lock soon stops),
    and a newcomer is never the one refused."""

    def __init__(self, capacity: int = MAX_WAITING) -> None:
        self.capacity = capacity
        self.waiting: Counter[str | None] = Counter()
        self._lock = threading.Lock()

    def enter(self, address: str | None) -> bool:
        with self._lock:
            addresses = len(self.waiting) + (address not in self.waiting)
            if self.waiting[address] >= max(1, self.capacity // addresses):
                return False
            self.waiting[address] += 1
            return True

    def leave(self, address: str | None) -> None:
        with self._lock:
            self.waiting[address] -= 1
            if self.waiting[address] <= 0:
                del self.waiting[address]


def check_password(store: Store, name: str, password: str) -> bool:
    """The same scrypt work whether or not the curator exists (see curators.authenticate)."""
    return curators.authenticate(store, name, password)


def make_auth(
    store: Store,
    guard: LoginGuard,
    address: Callable[[], str | None],
    room: WaitingRoom | None = None,
) -> Callable[[str, str], Awaitable[bool]]:
    """The async `auth` callable for `Blocks.launch`: the name's and address's locks, then a
    fair place in the queue for scrypt, which runs off the event loop.

    A locked name or address, or an address over its share of the queue, is refused with
    HTTP 429 and a message saying when to retry.
    """
    from fastapi import HTTPException  # only the served studio needs it

    room = room or WaitingRoom()

    async def auth(username: str, password: str) -> bool:
        name, client = curators.normalise_name(username), address_key(address())
        try:
            guard.check(name, client)
        except LockedOut as exc:
            raise HTTPException(status_code=429, detail=str(exc)) from exc
        if not room.enter(client):
            raise HTTPException(
                429, detail="too many logins from your address at once; try again in a second"
            )
        try:
            standing = guard.standing(client)  # before begin() counts this attempt
            guard.begin(name, client)
            job = functools.partial(check_password, store, name, password or "")
            ok = await asyncio.wrap_future(_HASHING.submit(standing, job))
        except LockedOut as exc:
            raise HTTPException(status_code=429, detail=str(exc)) from exc
        finally:
            room.leave(client)
        if ok:
            guard.succeeded(name, client)
        return ok

    return auth
