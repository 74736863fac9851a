"""Sessions end when they should, over real HTTP: a password change or a curator's removal
ends that curator's sessions, logout ends the sessions of every spelling of the name, and
no response body carries a session token."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx
from test_studio_reach import SECRET, studio  # noqa: F401 - fixture

from curation.curators import add_curator, name_key, remove_curator
from refpool.cli import main as refpool
from refpool.core.store import Store
from studio.login import LoginGuard

FULLWIDTH_ALICE = "\uff21lice"  # "Alice" with a fullwidth A, as some keyboards type it


@contextlib.contextmanager
def session(url: str, name: str, password: str = SECRET) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=30) as client:
        resp = client.post("/login", data={"username": name, "password": password})
        assert resp.status_code == 200, (name, resp.text)
        yield client


def logged_in(client: httpx.Client) -> bool:
    status = client.get("/config").status_code
    assert status in (200, 401), status
    return status == 200


def test_every_spelling_of_a_name_is_one_key():
    assert name_key(FULLWIDTH_ALICE) == name_key("ALICE") == name_key(" alice ") == "alice"
    assert name_key("ANA") == name_key("ana")
    assert name_key("jose\u0301") == name_key("JOSÉ")
    assert name_key("alice") != name_key("alicia")


def test_a_login_lock_holds_for_every_case_and_width():
    guard = LoginGuard(name_limit=2, address_limit=100)
    guard.failed("alice", None)
    guard.failed("ALICE", None)
    assert guard.names.keys() == {"alice"}
    guard.failed(FULLWIDTH_ALICE, None)
    assert guard.names["alice"].failures == 3


def test_a_password_change_ends_that_curator_s_sessions(store: Store, studio):  # noqa: F811
    add_curator(store, "alice", SECRET)
    add_curator(store, "bob", SECRET)
    url = studio(store, require_auth=True)
    with (
        session(url, "alice") as first,
        session(url, "alice") as second,
        session(url, "bob") as bob,
    ):
        assert logged_in(first) and logged_in(second) and logged_in(bob)
        add_curator(store, "alice", "a new long secret")  # as `refpool curators add` does
        assert not logged_in(first) and not logged_in(second)
        assert logged_in(bob)  # another curator's sessions go on
    with session(url, "alice", "a new long secret") as again:
        assert logged_in(again)


def test_removing_a_curator_ends_their_sessions(store: Store, studio, capsys):  # noqa: F811
    add_curator(store, "alice", SECRET)
    add_curator(store, "bob", SECRET)
    url = studio(store, require_auth=True)
    with session(url, "alice") as alice, session(url, "bob") as bob:
        assert logged_in(alice)
        assert refpool(["curators", "remove", "ALICE"]) == 0  # another process's store, too
        assert "removed curator alice" in capsys.readouterr().out
        assert not logged_in(alice) and logged_in(bob)
    refused = httpx.post(f"{url}/login", data={"username": "alice", "password": SECRET})
    assert refused.status_code == 400
    assert remove_curator(store, "alice") is None  # already gone


def test_logout_ends_the_sessions_of_every_spelling_of_the_name(store: Store, studio):  # noqa: F811
    add_curator(store, "alice", SECRET)
    add_curator(store, "ana", SECRET)
    url = studio(store, require_auth=True)
    with (
        session(url, "alice") as plain,
        session(url, FULLWIDTH_ALICE) as wide,
        session(url, "ALICE") as upper,
        session(url, "ANA") as ana,
    ):
        # every spelling logs in as the account, so ratings are recorded under one name
        assert wide.get("/config").json()["username"] == "alice"
        assert ana.get("/config").json()["username"] == "ana"
        out = wide.post("/logout", headers={"origin": url}, follow_redirects=False)
        assert out.status_code == 302
        assert not logged_in(plain) and not logged_in(upper) and not logged_in(wide)
        assert logged_in(ana)


def test_no_response_body_carries_the_session_token(store: Store, studio):  # noqa: F811
    add_curator(store, "alice", SECRET)
    url = studio(store, require_auth=True)
    with session(url, "alice") as client:
        tokens = {v for k, v in client.cookies.items() if k.startswith("access-token")}
        assert tokens
        for route in (
            "/",
            "/config",
            "/gradio_api/info",
            "/gradio_api/token",
            "/gradio_api/token/",
            "/gradio_api/user",
            "/gradio_api/login_check",
            "/gradio_api/app_id",
        ):
            body = client.get(route).text
            assert not any(token in body for token in tokens), route
        assert client.get("/gradio_api/token").status_code == 404
