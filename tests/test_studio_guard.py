"""The studio answers only its own pages, over real HTTP against the real app: reads from
another site or another port are refused and never granted by CORS, Gradio's routes the
studio does not use are closed, and nobody holds its connections or its logins up before
logging in (stalled headers, idle connections, a login flood from many addresses)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx
import pytest
from test_studio_client import free_port
from test_studio_exposure import from_address
from test_studio_reach import SECRET, logged_in, studio  # noqa: F401 - fixture

from curation.curators import add_curator
from curation.sessions import SessionTable
from refpool.core.store import Store
from studio import connections, guard, login
from studio.hosts import HostRules
from studio.login import LoginGuard

ROOT = Path(__file__).resolve().parent.parent
UNUSED = (
    ("POST", "/gradio_api/cancel"),
    ("POST", "/reset"),
    ("POST", "/gradio_api/reset"),
    ("GET", "/openapi.json"),
    ("GET", "/gradio_api/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/monitoring"),
    ("GET", "/monitoring/summary"),
    ("GET", "/gradio_api/dev/reload"),
    ("GET", "/gradio_api/token"),
    ("GET", "/gradio_api/user"),
    ("GET", "/gradio_api/heartbeat/abc"),
    ("POST", "/gradio_api/call/init"),
)


def cors_grants(resp: httpx.Response) -> list[str]:
    return [k for k in resp.headers if k.lower().startswith("access-control-")]


def test_reads_from_another_site_or_port_are_refused(store: Store, studio):  # noqa: F811
    add_curator(store, "alice", SECRET)
    url = studio(store, require_auth=True)
    other_port = f"http://127.0.0.1:{free_port()}"  # a dev server or notebook on this machine
    with logged_in(url) as c:
        for headers in (
            {"origin": other_port},
            {"origin": "https://attacker.example"},
            {"sec-fetch-site": "cross-site", "sec-fetch-mode": "cors"},
            {"sec-fetch-site": "same-site", "sec-fetch-mode": "cors"},
            {"sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors"},
        ):
            for route in ("/config", "/gradio_api/info", "/"):
                resp = c.get(route, headers=headers)
                assert resp.status_code == 403, (route, headers, resp.status_code)
                assert "another site or another port" in resp.text
                assert not cors_grants(resp)
            init = c.post("/gradio_api/run/init", json={"data": []}, headers=headers)
            assert init.status_code == 403
        # the studio's own page, the address bar, and tools without these headers
        own = {"sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "origin": url}
        assert c.get("/config", headers=own).status_code == 200
        assert c.get("/", headers={"sec-fetch-site": "none"}).status_code == 200
        assert c.get("/config").status_code == 200
        # a link to the studio followed from elsewhere opens the page (nothing is readable)
        link = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"}
        assert c.get("/", headers={**link, "sec-fetch-dest": "document"}).status_code == 200
        assert c.get("/", headers={**link, "sec-fetch-dest": "iframe"}).status_code == 403


def test_no_cors_grant_for_any_origin_even_with_an_allowed_host(store: Store, studio):  # noqa: F811
    add_curator(store, "alice", SECRET)
    url = studio(store, allowed_hosts=["studio.example.org"])
    other_port = f"http://127.0.0.1:{free_port()}"
    with logged_in(url) as c:
        for origin in (other_port, "https://attacker.example", "https://studio.example.org", url):
            read = c.get("/config", headers={"origin": origin})
            preflight = c.options(
                "/gradio_api/run/init",
                headers={"origin": origin, "access-control-request-method": "POST"},
            )
            assert not cors_grants(read) and not cors_grants(preflight), origin
        assert c.get("/config", headers={"origin": other_port}).status_code == 403


def test_unused_gradio_routes_are_closed_before_login_and_to_curators(store: Store, studio):  # noqa: F811
    add_curator(store, "alice", SECRET)
    url = studio(store, require_auth=True)

    def status(client: httpx.Client, method: str, route: str) -> int:
        with client.stream(method, route, json={} if method == "POST" else None) as resp:
            return resp.status_code  # a stream's status is all we wait for

    with httpx.Client(base_url=url, timeout=10) as anyone:
        for method, route in UNUSED:
            assert status(anyone, method, route) == 404, (method, route)
        assert anyone.get("/config").status_code == 401
        assert anyone.get("/").status_code == 200  # the login form
    with logged_in(url) as curator:
        for method, route in UNUSED:
            assert status(curator, method, route) == 404, (method, route)
        assert curator.get("/config").status_code == 200
        assert curator.get("/gradio_api/info").status_code == 200
    loopback = studio(store)  # no login: the same routes are closed
    with httpx.Client(base_url=loopback, timeout=10) as local:
        for method, route in UNUSED:
            assert status(local, method, route) == 404, (method, route)


def test_a_stalled_request_head_is_closed_after_the_request_timeout(
    store: Store,
    studio,  # noqa: F811
    monkeypatch,
):
    monkeypatch.setattr(connections, "REQUEST_TIMEOUT", 0.5)
    url = studio(store)
    port = int(url.rsplit(":", 1)[1])
    partial = socket.create_connection(("127.0.0.1", port), timeout=5)
    silent = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        partial.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")  # and no more
        started = time.monotonic()
        assert partial.recv(1024) == b""  # closed by the studio, not by our 5 s timeout
        assert silent.recv(1024) == b""
        assert time.monotonic() - started < 3
    finally:
        partial.close()
        silent.close()
    assert httpx.get(url + "/", timeout=10).status_code == 200


CHILD = textwrap.dedent(
    """
    import resource, sys
    from app import launch
    from curation.curators import add_curator
    from curation.service import Services, Settings
    from refpool.core.store import Store

    store = Store(sys.argv[1])
    add_curator(store, "alice", sys.argv[3])
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (160, hard))  # a small file limit: quick to hit
    demo, url = launch(Services(store, Settings()), port=int(sys.argv[2]), require_auth=True,
                       prevent_thread_lock=True, quiet=True)
    print(url, flush=True)
    sys.stdin.read()  # serve until the test closes stdin
    """
)


def test_idle_connections_do_not_keep_a_logged_in_curator_out(tmp_path):
    """300 connections that never send a request, against a studio with a 160-file limit:
    the curator's next request still gets through at once."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "home"), str(port), SECRET],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    idle: list[socket.socket] = []
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip().rstrip("/")
        assert url.startswith("http"), "the studio did not start"
        cookies = httpx.post(f"{url}/login", data={"username": "alice", "password": SECRET}).cookies
        for _ in range(300):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(0.5)
        with httpx.Client(base_url=url, cookies=cookies, timeout=5) as alice:
            assert alice.get("/config").status_code == 200
    finally:
        for s in idle:
            s.close()
        child.kill()
        child.wait(timeout=10)


def test_visitors_share_a_few_slots_and_never_hold_a_curator(store: Store):
    """Requests without a session take a slot (503 at once when none is free); a curator's
    request takes none, so it goes through while visitors fill every slot."""
    add_curator(store, "alice", SECRET)
    sessions = SessionTable(store)
    sessions["tok"] = "alice"
    release = asyncio.Event()

    async def app(scope, receive, send):
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    def scope(cookie: bytes = b"") -> dict:
        headers = [(b"host", b"127.0.0.1:7860"), (b"cookie", cookie)]
        return {"type": "http", "method": "GET", "path": "/", "headers": headers}

    async def call(guarded: guard.StudioGuard, cookie: bytes = b"") -> int:
        sent: list[dict] = []

        async def send(message):
            sent.append(message)

        await guarded(scope(cookie), None, send)
        return sent[0]["status"]

    async def scenario() -> None:
        hosts = HostRules.make("127.0.0.1")
        guarded = guard.StudioGuard(app, hosts=hosts, sessions=sessions, login=True, slots=2)
        held = [asyncio.create_task(call(guarded)) for _ in range(2)]
        await asyncio.sleep(0.05)
        assert await asyncio.wait_for(call(guarded), 1) == 503  # at once, not queued
        curator = asyncio.create_task(call(guarded, b"access-token-x=tok"))
        await asyncio.sleep(0.05)
        release.set()
        assert await asyncio.wait_for(curator, 1) == 200
        assert [await t for t in held] == [200, 200]
        assert guarded.anonymous == 0

    asyncio.run(scenario())


@pytest.fixture
def slow_hash(monkeypatch):
    """Each password check takes a steady 0.1 s (scrypt's time varies with the machine's
    load): a queue of guesses becomes easy to see, and the test quick."""

    def slow(store: Store, name: str, password: str) -> bool:
        time.sleep(0.1)
        return (name, password) == ("alice", SECRET)

    monkeypatch.setattr(login, "check_password", slow)


def test_a_login_flood_from_many_addresses_does_not_delay_a_curator(
    store: Store,
    studio,  # noqa: F811
    slow_hash,
):
    """16 addresses keep a guess each in the hashing queue (1.6 s of work at any moment);
    alice, from a clean address, is hashed next, not after them."""
    add_curator(store, "alice", SECRET)
    limits = LoginGuard(name_limit=10**6, address_limit=10**6)
    url = studio(store, require_auth=True, guard=limits)
    stop = threading.Event()
    flooding = [f"127.0.0.{2 + i}" for i in range(16)]

    def flood(address: str) -> None:
        with from_address(address) as c:
            while not stop.is_set():
                if (
                    c.post(f"{url}/login", data={"username": "x", "password": "y"}).status_code
                    == 429
                ):
                    time.sleep(0.02)

    def every_address_has_failed() -> bool:  # its first guess is hashed: a second is counted
        return all(a in limits.addresses and limits.addresses[a].failures >= 2 for a in flooding)

    floods = [threading.Thread(target=flood, args=(address,)) for address in flooding]
    for t in floods:
        t.start()
    try:
        deadline = time.monotonic() + 30
        while not every_address_has_failed() and time.monotonic() < deadline:
            time.sleep(0.05)
        with from_address("127.0.0.99") as alice:
            started = time.monotonic()
            resp = alice.post(f"{url}/login", data={"username": "alice", "password": SECRET})
            took = time.monotonic() - started
        assert resp.status_code == 200, resp.text
        assert took < 0.8, f"alice waited {took:.1f} s behind the flood"
    finally:
        stop.set()
        for t in floods:
            t.join(timeout=60)
