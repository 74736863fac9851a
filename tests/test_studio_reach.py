"""Who reaches the studio, over real HTTP against the real app: a web page rebinding its name
to 127.0.0.1, a cross-site form, a huge or endless body, another app's temp files, a grid
call naming thousands of ids, logout only by the studio's own POST, TLS cookies and HSTS."""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from factories import populate
from gradio_client import Client
from test_studio_client import free_port

from app import launch
from curation.commands import view_token
from curation.curators import add_curator
from curation.grid import GRID_BATCH_LIMIT
from curation.service import Services, Settings
from refpool.core.errors import InputError
from refpool.core.store import Store
from studio.exposure import BODY_LIMIT
from studio.hosts import HostRules, check_allowed_host, check_trusted_proxy

SECRET = "a long secret"


@pytest.fixture
def studio():
    """start(store, **launch options) -> url; every studio started is closed afterwards."""
    running = []

    def start(store: Store, settings: Settings | None = None, **options) -> str:
        demo, url = launch(
            Services(store, settings or Settings()),
            port=free_port(),
            prevent_thread_lock=True,
            quiet=True,
            **options,
        )
        running.append(demo)
        return url.rstrip("/")

    yield start
    for demo in running:
        demo.close()


def ratings(store: Store) -> int:
    return store.query("SELECT COUNT(*) AS n FROM ratings")[0]["n"]


def rate_call(store, cid: int, curator: str = "curator") -> dict:
    """The body the page posts for a rating (Gradio's /run route, as the studio's JS uses): a
    command with a fresh id and the token the view gave for the painting it showed."""
    token = view_token(store, curator, cid)
    command = {"id": uuid.uuid4().hex, "cid": cid, "tier": "love", "note": "", "seen": 0}
    return {"data": [json.dumps(command | {"token": token}), curator]}


@contextlib.contextmanager
def logged_in(url: str, name: str = "alice") -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=30) as client:
        resp = client.post("/login", data={"username": name, "password": SECRET})
        assert resp.status_code == 200, resp.text
        yield client


def test_a_rebound_name_is_refused_and_the_studio_s_own_names_served(store, studio):
    ids = populate(store, 3)
    url = studio(store)  # loopback, no login: what a rebinding page would reach
    port = url.rsplit(":", 1)[1]
    evil = {"host": f"attacker.example:{port}"}
    page = httpx.get(url + "/", headers=evil, timeout=30)
    assert page.status_code == 421
    assert "attacker.example" in page.text and "--allowed-host" in page.text
    # the rebinding page's real goal: rate, and read the Agreement tab
    post = httpx.post(f"{url}/gradio_api/run/rate", json=rate_call(store, ids[0]), headers=evil)
    assert post.status_code == 421 and ratings(store) == 0
    assert (
        httpx.post(f"{url}/gradio_api/run/agreement", json={"data": []}, headers=evil).status_code
        == 421
    )
    for own in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert httpx.get(url + "/", headers={"host": own}, timeout=30).status_code == 200
    assert (
        httpx.post(
            f"{url}/gradio_api/run/rate", json=rate_call(store, ids[0]), timeout=30
        ).status_code
        == 200
    )
    assert ratings(store) == 1


def test_allowed_host_names_are_served_and_turn_login_on(store, studio):
    add_curator(store, "alice", SECRET)
    url = studio(store, allowed_hosts=["Studio.Example.org"])
    port = url.rsplit(":", 1)[1]
    ok = httpx.get(f"{url}/config", headers={"host": f"studio.example.org:{port}"}, timeout=30)
    assert ok.status_code == 401  # served, and behind the login a public name needs
    other = httpx.get(f"{url}/config", headers={"host": f"other.example.org:{port}"}, timeout=30)
    assert other.status_code == 421


def test_cross_site_posts_are_refused_and_logout_is_a_post_from_the_studio(store, studio):
    ids = populate(store, 3)
    add_curator(store, "alice", SECRET)
    url = studio(store, require_auth=True)
    evil = {"origin": "https://attacker.example"}
    with logged_in(url) as c:
        forged = c.post(
            "/gradio_api/run/rate", json=rate_call(store, ids[0], "alice"), headers=evil
        )
        assert forged.status_code == 403 and "another site" in forged.text
        assert (
            c.post(
                "/gradio_api/run/rate", json=rate_call(store, ids[0]), headers={"origin": "null"}
            ).status_code
            == 403
        )
        assert ratings(store) == 0
        assert (
            c.post(
                "/gradio_api/run/rate",
                json=rate_call(store, ids[0], "alice"),
                headers={"origin": url},
            ).status_code
            == 200
        )
        assert ratings(store) == 1
        # a cross-site <img src=/logout> or link: nothing happens
        get = c.get("/logout", follow_redirects=False)
        assert get.status_code == 405 and "Log out" in get.text
        assert c.post("/logout", headers=evil, follow_redirects=False).status_code == 403
        assert c.get("/config").status_code == 200  # still logged in
        cookies = dict(c.cookies)
        out = c.post("/logout", headers={"origin": url}, follow_redirects=False)
        assert out.status_code == 302
    with httpx.Client(base_url=url, cookies=cookies, timeout=30) as after:
        assert after.get("/config").status_code == 401  # the session is over, even with its cookie


@pytest.mark.browser
def test_the_logged_in_page_has_a_logout_button_that_logs_out(store, studio):
    from playwright.sync_api import sync_playwright
    from test_studio_browser import FLAGS

    add_curator(store, "alice", SECRET)
    populate(store, 2)
    url = studio(store, require_auth=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        try:
            page = browser.new_page()
            page.goto(url)
            page.locator("input[type=password]").wait_for()
            page.locator("input:not([type=password])").first.fill("alice")
            page.locator("input[type=password]").fill(SECRET)
            page.keyboard.press("Enter")
            page.locator("#rp-logout").wait_for(timeout=30_000)
            session = {c["name"]: c["value"] for c in page.context.cookies()}
            assert httpx.get(f"{url}/config", cookies=session, timeout=30).status_code == 200
            page.locator("#rp-logout").click()
            page.locator("input[type=password]").wait_for(timeout=30_000)
            assert page.locator("#rp-logout").count() == 0
            # the session itself is over, not only forgotten by this browser
            assert httpx.get(f"{url}/config", cookies=session, timeout=30).status_code == 401
        finally:
            browser.close()


def test_request_bodies_are_limited(store, studio):
    ids = populate(store, 2)
    url = studio(store)
    note = "x" * (BODY_LIMIT + 1)
    big = httpx.post(
        f"{url}/gradio_api/run/note", json={"data": [ids[0], note, "curator"]}, timeout=30
    )
    assert big.status_code == 413 and "KiB" in big.json()["detail"]

    def endless():  # chunked: no Content-Length to refuse up front
        for _ in range(BODY_LIMIT // 4096 + 2):
            yield b"x" * 4096

    chunked = httpx.post(f"{url}/gradio_api/run/note", content=endless(), timeout=30)
    assert chunked.status_code == 413
    assert httpx.get(url + "/", timeout=30).status_code == 200  # the studio is unharmed


def test_another_app_s_temp_files_are_not_served(store, studio):
    add_curator(store, "alice", SECRET)
    populate(store, 2)
    shared = Path(tempfile.gettempdir()) / "gradio" / uuid.uuid4().hex
    shared.mkdir(parents=True)
    theirs = shared / "their-upload.txt"
    theirs.write_text("another app's private upload")
    try:
        url = studio(store, require_auth=True)
        png = store.query("SELECT png_sha FROM candidates LIMIT 1")[0]["png_sha"]
        with logged_in(url) as c:
            leaked = c.get(f"/gradio_api/file={theirs}")
            assert leaked.status_code == 404 and "private upload" not in leaked.text
            assert c.get(f"/gradio_api/file/{theirs}").status_code == 404
            assert c.get(f"/gradio_api/file={store.png_path(png)}").status_code == 200
    finally:
        theirs.unlink()
        shared.rmdir()


def test_one_grid_call_writes_at_most_one_page_of_ratings(store, studio):
    ids = populate(store, 4)
    url = studio(store)
    client = Client(url, verbose=False)
    many = ",".join(str(ids[0]) for _ in range(2000))  # one candidate, named 2,000 times
    client.predict(many, "okay", 1, "gil", api_name="/grid_rate")
    assert ratings(store) == 1
    too_many = ",".join(str(i) for i in [*ids, *range(10**6, 10**6 + GRID_BATCH_LIMIT)])
    with pytest.raises(Exception, match=f"at most {GRID_BATCH_LIMIT}"):
        client.predict(too_many, "love", 1, "gil", api_name="/grid_rate")
    assert ratings(store) == 1  # nothing of the refused batch was written


def make_cert(folder: Path) -> tuple[str, str]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return str(cert), str(key)


def test_under_tls_cookies_are_secure_and_responses_carry_hsts(store, studio, tmp_path):
    add_curator(store, "alice", SECRET)
    cert, key = make_cert(tmp_path)
    url = studio(store, require_auth=True, ssl_certfile=cert, ssl_keyfile=key)
    resp = httpx.post(f"{url}/login", data={"username": "alice", "password": SECRET}, verify=False)
    cookies = resp.headers.get_list("set-cookie")
    assert resp.status_code == 200 and len(cookies) >= 2
    assert all("secure" in c.lower() and "samesite=lax" in c.lower() for c in cookies), cookies
    assert "max-age=" in resp.headers["strict-transport-security"]
    page = httpx.get(url + "/", verify=False, timeout=30)
    assert "strict-transport-security" in page.headers
    plain = studio(store, require_auth=True)  # no TLS: no HSTS (it would lock the name to TLS)
    assert "strict-transport-security" not in httpx.get(plain + "/", timeout=30).headers


def test_host_and_origin_rules_and_bad_flags_say_what_to_pass():
    loopback = HostRules.make("127.0.0.1", ["studio.example.org"])
    assert loopback.host_ok("[::1]:7860") and loopback.host_ok("LOCALHOST:7860")
    assert loopback.host_ok("studio.example.org.") and not loopback.host_ok("rebind.example")
    assert not loopback.host_ok(None)
    # another app on this machine (another port) is another site
    assert not loopback.origin_ok("http://localhost:9999", "localhost:7860")
    assert loopback.origin_ok("https://studio.example.org", "127.0.0.1:7860")  # via the proxy
    everywhere = HostRules.make("0.0.0.0")
    assert everywhere.host_ok("192.168.1.4:7860") and not everywhere.host_ok("lab.example")
    for bad in ("http://studio.example.org/", "studio.example.org:443", "*.example.org"):
        with pytest.raises(InputError, match="allowed host .* e.g. studio.example.org"):
            check_allowed_host(bad)
    with pytest.raises(InputError, match="trusted proxy .* e.g. 127.0.0.1"):
        check_trusted_proxy("my-proxy")
