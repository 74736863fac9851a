"""An exposed studio over real HTTP: nothing named before login, login backoff, the dummy
hash, scrypt off the event loop, framing headers, no upload route, reports under a strict
CSP (and not served at all by a blind studio)."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time

import httpx
import pytest
from factories import add_photo, populate
from gradio_client import Client
from test_studio_client import free_port

from app import launch, plain_http_warning
from curation import curators
from curation.curators import DUMMY_HASH, add_curator, ensure_curator
from curation.ratings import record_rating
from curation.service import Services, Settings
from refpool.core.store import Store
from studio.login import HASH_THREAD_PREFIX, LoginGuard
from studio.pool_tab import build_draft

SECRET = "a long secret"
MODELS = ("secret-coder-9", "hidden-llm")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def seed(store: Store) -> dict[str, list[str]]:
    """Curators (with and without passwords), photos, models, ratings; returns every name."""
    ids = populate(store, 6, models=MODELS)
    add_photo(store, "orchid-unused.jpg")
    add_curator(store, "alice", SECRET)
    add_curator(store, "bob", SECRET)
    ensure_curator(store, "zoë-rater")  # no password, has rated
    for cid in ids[:3]:
        record_rating(store, cid, "zoë-rater", "love")
    photos = [r["file_name"] for r in store.query("SELECT file_name FROM photos")]
    jobs = [r["job_key"] for r in store.query("SELECT job_key FROM candidates")]
    return {
        "curators": ["alice", "bob", "zoë-rater"],
        "photos": photos,
        "models": [*MODELS],
        "jobs": jobs,
    }


@pytest.fixture
def exposed(tmp_path):
    """Start studios with login on; yields start(store, **settings) -> (url, guard)."""
    running = []

    def start(store: Store, guard: LoginGuard | None = None, trusted_proxies=(), **settings):
        guard = guard or LoginGuard()
        demo, url = launch(
            Services(store, Settings(**settings)),
            port=free_port(),
            require_auth=True,
            prevent_thread_lock=True,
            quiet=True,
            guard=guard,
            trusted_proxies=trusted_proxies,
        )
        running.append(demo)
        return url.rstrip("/"), guard

    yield start
    for demo in running:
        demo.close()


def login(url: str, name: str, password: str, **headers: str) -> httpx.Response:
    data = {"username": name, "password": password}
    return httpx.post(f"{url}/login", data=data, headers=headers, timeout=30)


def from_address(address: str) -> httpx.Client:
    """A client whose connections come from `address` (any 127.x.y.z is this machine)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=60)


def test_nothing_named_reaches_a_client_before_login(store, exposed):
    names = seed(store)
    url, _ = exposed(store)
    every = [n for group in names.values() for n in group]
    for route in (
        "/",
        "/config",
        "/gradio_api/info",
        "/gradio_api/info?all_endpoints=true",
        "/gradio_api/login_check",
        "/theme.css",
        "/gradio_api/app_id",
        "/manifest.json",
    ):
        body = httpx.get(url + route, timeout=30).text
        leaked = [n for n in every if n in body or n.encode("unicode_escape").decode() in body]
        assert not leaked, f"{route} names {leaked} before login"
    png = store.query("SELECT png_sha FROM candidates LIMIT 1")[0]["png_sha"]
    assert httpx.get(f"{url}/gradio_api/file={store.png_path(png)}").status_code in (401, 403)
    # the names are there after login, per session: the test can see them when they are sent
    client = Client(url, verbose=False, auth=("alice", SECRET))
    who, _, photo, model, _, _, rated, *_ = client.predict(api_name="/init")
    assert who == "alice"
    client_text = str([photo, model, rated])
    assert "secret-coder-9" in client_text and "zoë-rater" in client_text


def test_name_and_address_backoff_over_http(store, exposed):
    seed(store)
    clock = Clock()
    url, guard = exposed(store, LoginGuard(name_limit=5, address_limit=8, clock=clock))
    for _ in range(5):
        assert login(url, "alice", "wrong password").status_code == 400
    locked = login(url, "alice", SECRET)  # the right password, but too late
    assert locked.status_code == 429 and "too many failed logins for this name" in locked.text
    assert login(url, "bob", SECRET).status_code == 200  # another name from here still works
    clock.now += 3  # the first lock (2 s) is over
    assert login(url, "alice", SECRET).status_code == 200
    # the address: 8 failures in a row, spread over made-up names, lock everyone out from it
    for i in range(8):
        assert login(url, f"nobody{i}", "wrong password").status_code == 400
    refused = login(url, "bob", SECRET)
    assert refused.status_code == 429 and "for this address" in refused.text
    clock.now += 3
    assert login(url, "bob", SECRET).status_code == 200


def test_a_flood_from_many_addresses_does_not_refuse_a_curator_on_another(store, exposed):
    """10 addresses keep 2 wrong logins each in flight (more than the hashing queue's 16)
    while alice logs in from an 11th: she gets in every time; the flood is what waits."""
    seed(store)
    url, _ = exposed(store, LoginGuard(name_limit=10**6, address_limit=10**6))  # locks not yet hit
    stop, refused = threading.Event(), []

    def flood(address: str) -> None:
        with from_address(address) as c:
            while not stop.is_set():
                r = c.post(f"{url}/login", data={"username": "mallory", "password": "guess"})
                if r.status_code == 429:
                    refused.append(address)
                    time.sleep(0.02)  # spare the test machine's CPU, not the studio's queue

    floods = [
        threading.Thread(target=flood, args=(f"127.0.0.{2 + i}",), daemon=True)
        for i in range(10)
        for _ in range(2)
    ]
    for t in floods:
        t.start()
    try:
        time.sleep(1.5)  # the queue is full of the flood's guesses
        with from_address("127.0.0.99") as alice:
            for _ in range(2):
                resp = alice.post(f"{url}/login", data={"username": "alice", "password": SECRET})
                assert resp.status_code == 200, resp.text
    finally:
        stop.set()
        for t in floods:
            t.join(timeout=60)
    assert refused, "the flood never filled its share: the test did not test anything"


def test_a_lock_holds_for_every_spelling_of_the_name(store, exposed):
    """José locked as typed in NFC is locked typed in NFD too (authentication merges them)."""
    seed(store)
    add_curator(store, "josé", SECRET)
    url, _ = exposed(store, LoginGuard(name_limit=5, address_limit=100))
    for _ in range(5):
        assert login(url, "jos\u00e9", "wrong password").status_code == 400
    locked = login(url, "jose\u0301", SECRET)
    assert locked.status_code == 429 and "for this name" in locked.text
    assert login(url, " JOSÉ ".lower(), SECRET).status_code == 429


def test_forwarded_for_counts_only_from_a_trusted_proxy(store, exposed):
    seed(store)
    url, _ = exposed(store, LoginGuard(name_limit=100, address_limit=8, clock=Clock()))
    for i in range(8):  # each claims another address: the real peer is what is counted
        assert (
            login(url, f"nobody{i}", "wrong", **{"x-forwarded-for": f"10.1.0.{i}"}).status_code
            == 400
        )
    dodged = login(url, "bob", SECRET, **{"x-forwarded-for": "10.1.0.200"})
    assert dodged.status_code == 429 and "for this address" in dodged.text
    # behind a proxy given with --trusted-proxy, the address it forwards is the client's
    url, _ = exposed(
        store,
        LoginGuard(name_limit=100, address_limit=8, clock=Clock()),
        trusted_proxies=["127.0.0.1"],
    )
    for i in range(8):
        assert (
            login(url, f"nobody{i}", "wrong", **{"x-forwarded-for": "10.9.9.9"}).status_code == 400
        )
    assert login(url, "bob", SECRET, **{"x-forwarded-for": "10.9.9.8"}).status_code == 200
    assert login(url, "bob", SECRET, **{"x-forwarded-for": "10.9.9.9"}).status_code == 429


def test_unknown_names_cost_a_dummy_hash_off_the_event_loop(store, exposed, monkeypatch):
    seed(store)
    url, _ = exposed(store)
    calls: list[tuple[str, str]] = []
    real = curators.verify_password

    def recording(password: str, stored: str) -> bool:
        calls.append((stored, threading.current_thread().name))
        return real(password, stored)

    monkeypatch.setattr(curators, "verify_password", recording)
    for name in ("mallory", "zoë-rater", "alice"):  # unknown, no password, real
        assert login(url, name, "wrong password").status_code == 400
    assert [stored == DUMMY_HASH for stored, _ in calls] == [True, True, False]
    assert all(thread.startswith(HASH_THREAD_PREFIX) for _, thread in calls), calls


def test_framing_headers_no_upload_and_report_csp(store, exposed, tmp_path):
    seed(store)
    draft = build_draft(Services(store, Settings()), 10)  # written by a non-blind studio
    assert draft.report is not None
    url, _ = exposed(store)
    page = httpx.get(url + "/", timeout=30)
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    cookies = login(url, "alice", SECRET).cookies
    with httpx.Client(base_url=url, cookies=cookies, timeout=30) as c:
        up = c.post("/gradio_api/upload", files={"files": ("x.html", b"<script>1</script>")})
        assert up.status_code == 404 and "no uploads" in up.text
        assert draft.report.url == "reports/draft-1.html"  # no server path in the page
        report = c.get("/" + draft.report.url)
        assert report.status_code == 200 and b"Diversity report" in report.content
        for other in ("/reports/draft-2.html", "/reports/draft-01.html", "/reports/store.db"):
            assert c.get(other).status_code in (403, 404), other  # only a draft id names a file
        csp = report.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "sandbox" in csp and "script-src" not in csp
    blind_url, _ = exposed(store, blind=True)
    cookies = login(blind_url, "alice", SECRET).cookies
    with httpx.Client(base_url=blind_url, cookies=cookies, timeout=30) as c:
        assert c.get("/" + draft.report.url).status_code in (403, 404)


def test_plain_http_warning_and_tls(store, tmp_path, capsys):
    assert "plain HTTP" in plain_http_warning("0.0.0.0") and "--ssl-certfile" in plain_http_warning(
        "x"
    )
    seed(store)
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    with pytest.raises(SystemExit, match="needs both"):
        launch(Services(store, Settings()), port=free_port(), ssl_certfile=str(cert))
    demo, url = launch(
        Services(store, Settings()),
        port=free_port(),
        require_auth=True,
        prevent_thread_lock=True,
        quiet=True,
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
    )
    try:
        assert url.startswith("https://")
        resp = httpx.post(
            url.rstrip("/") + "/login",
            data={"username": "alice", "password": SECRET},
            verify=False,
            timeout=30,
        )
        assert resp.status_code == 200
    finally:
        demo.close()


def test_blind_studio_ships_no_model_or_curator_name_even_after_login(store, exposed):
    names = seed(store)
    url, _ = exposed(store, blind=True)
    cookies = login(url, "alice", SECRET).cookies
    config = httpx.get(url + "/config", cookies=cookies, timeout=30).text
    client = Client(url, verbose=False, auth=("alice", SECRET))
    sent = str(client.predict(api_name="/init"))
    for name in [*names["models"], "bob", "zoë-rater"]:
        assert name not in config and name not in sent, name
    assert "flower0.jpg" in sent  # photos are still offered after login


def test_a_report_is_handed_on_as_the_file_url_a_browser_would_send(tmp_path):
    """A home with a space or an accent still reaches Gradio's file route, percent-encoded."""
    from urllib.parse import quote

    from studio.exposure import ExposureMiddleware

    reports = tmp_path / "zoë home" / "reports"
    reports.mkdir(parents=True)
    (reports / "draft-3.html").write_text("<p>report</p>")
    seen: list[dict] = []

    async def app(scope, receive, send):
        seen.append(scope)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        pass

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/reports/draft-3.html",
        "raw_path": b"/reports/draft-3.html",
        "headers": [(b"host", b"127.0.0.1")],
        "scheme": "http",
        "client": ("127.0.0.1", 5000),
    }
    asyncio.run(ExposureMiddleware(app, reports, served=[reports])(scope, receive, send))
    [handed] = seen
    target = (reports / "draft-3.html").resolve()
    assert handed["path"] == "/gradio_api/file=" + str(target)
    assert handed["raw_path"] == ("/gradio_api/file=" + quote(str(target))).encode("ascii")
