"""The launched studio driven through gradio_client: every handler reachable by api_name."""

from __future__ import annotations

import json
import re
import socket
import uuid

import pytest
from factories import populate
from gradio_client import Client

from app import launch
from curation.curators import add_curator
from curation.ratings import my_latest, record_rating
from curation.service import Services, Settings
from pool.selection.draft import latest_draft
from refpool.core.store import Store


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cid_of(html: str) -> int | None:
    m = re.search(r'id="rp-view" data-cid="(\d*)"', html)
    return int(m.group(1)) if m and m.group(1) else None


def command(html: str, cid: int, tier: str, note: str = "", seen: int = 0) -> str:
    """A rating command as the page makes one: a fresh id and the view's token for `cid`."""
    pairs = re.search(r'data-tokens="([^"]*)"', html).group(1).split()
    token = dict(p.split(":") for p in pairs).get(str(cid), "")
    return json.dumps(
        {
            "id": uuid.uuid4().hex,
            "cid": cid,
            "tier": tier,
            "note": note,
            "seen": seen,
            "token": token,
        }
    )


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("studio-client"))
    ids = populate(store, 8)
    demo, url = launch(
        Services(store, Settings()), port=free_port(), prevent_thread_lock=True, quiet=True
    )
    yield store, ids, Client(url, verbose=False)
    demo.close()
    store.close()


def test_rate_undo_navigate_note_via_api(app):
    store, ids, client = app
    who, html, *_ = client.predict(api_name="/init")
    assert who == "curator" and cid_of(html) == ids[0]
    html = client.predict("cal", api_name="/show")
    first = command(html, ids[0], "love", "first!")
    html = client.predict(first, "cal", api_name="/rate")
    assert cid_of(html) == ids[1] and "Saved love" in html and 'data-outcome="saved"' in html
    assert my_latest(store, "cal") == {ids[0]: "love"}
    again = client.predict(first, "cal", api_name="/rate")  # the same command, sent again
    assert 'data-outcome="duplicate"' in again and "Already saved love" in again
    assert len(store.query("SELECT id FROM ratings WHERE curator = 'cal'")) == 1
    html = client.predict(command(html, ids[1], "great"), "cal", api_name="/rate")
    assert "tier must be one of" in html and cid_of(html) == ids[1]
    html = client.predict("cal", api_name="/undo")
    assert cid_of(html) == ids[0] and my_latest(store, "cal") == {}
    html = client.predict(ids[0], 1, "cal", api_name="/navigate")
    assert cid_of(html) == ids[1]
    html = client.predict("cal", api_name="/show")  # the stored cursor
    assert cid_of(html) == ids[1]
    html = client.predict(ids[1], "needs more red", "cal", api_name="/note")
    assert "with your rating" in html  # the page keeps the note in its box


def test_filters_grid_and_agreement_via_api(app):
    store, ids, client = app
    html, *_ = client.predict(
        "(any)",
        "glm-x",
        "(any)",
        "(any)",
        "(any)",
        "(any)",
        False,
        False,
        "gil",
        api_name="/filters",
    )
    assert cid_of(html) == ids[1]  # populate alternates procedural / glm-x
    grid = client.predict(1, "gil", api_name="/grid")
    assert grid.count('class="rp-tile"') == len(ids) // 2
    grid = client.predict(f"{ids[1]},{ids[3]}", "okay", 1, "gil", api_name="/grid_rate")
    assert "Saved okay for 2" in grid
    assert my_latest(store, "gil") == {ids[1]: "okay", ids[3]: "okay"}
    shown = client.predict(ids[1], "hal", api_name="/goto")  # the tab switch is not returned
    client.predict(command(shown, ids[1], "reject"), "hal", api_name="/rate")
    report = client.predict(api_name="/agreement")
    assert "Cohen" in report and f'data-rp-goto="{ids[1]}"' in report


def test_pool_tab_builds_a_draft_and_its_report_via_api(app):
    store, ids, client = app
    for cid in ids[4:]:  # the other tests rate ids[:4]; these four are only ours
        record_rating(store, cid, "pia", "love" if cid % 2 else "okay")
    summary, report = client.predict(500, 0.5, None, None, api_name="/pool")
    draft = latest_draft(store)
    assert draft is not None and set(ids[4:]) <= set(draft.candidate_ids)
    assert f'id="rp-pool-total">{len(draft.candidate_ids)}<' in summary
    assert f'id="rp-pool-love">{draft.count("love")}<' in summary
    assert "target 500 not reached" in summary
    name = re.search(r'download="(draft-\d+\.html)"', report).group(1)
    assert (store.home / "reports" / name).exists()
    assert "<iframe" in report and 'srcdoc="&lt;!doctype html&gt;' in report
    # the download link is served by the studio
    import urllib.request

    url = re.search(r'href="([^"]+)" download', report).group(1)
    with urllib.request.urlopen(client.src.rstrip("/") + "/" + url) as resp:
        assert b"Diversity report" in resp.read()
    summary, report = client.predict(0, 0.5, None, None, api_name="/pool")
    assert "Target size must be a whole number of at least 1" in summary


def test_login_required_when_auth_is_on(tmp_path):
    store = Store(tmp_path / "auth")
    ids = populate(store, 2)
    with pytest.raises(SystemExit, match="no curator has a password"):
        launch(
            Services(store, Settings()),
            port=free_port(),
            require_auth=True,
            prevent_thread_lock=True,
        )
    add_curator(store, "alice", "a long secret")
    services = Services(store, Settings())
    demo, url = launch(
        services, port=free_port(), require_auth=True, prevent_thread_lock=True, quiet=True
    )
    try:
        with pytest.raises(Exception):  # noqa: B017 - the client refuses without credentials
            Client(url, verbose=False, auth=("alice", "wrong password")).predict(api_name="/init")
        client = Client(url, verbose=False, auth=("alice", "a long secret"))
        # the curator name sent by the client is ignored: the login decides who rates
        shown = client.predict("mallory", api_name="/show")
        client.predict(command(shown, ids[0], "okay"), "mallory", api_name="/rate")
        assert my_latest(store, "alice") == {ids[0]: "okay"} and my_latest(store, "mallory") == {}
    finally:
        demo.close()


def test_serves_renders_but_never_the_database(app):
    import urllib.error
    import urllib.request

    store, ids, client = app
    base = client.src.rstrip("/") + "/"
    sha = store.query("SELECT png_sha FROM candidates WHERE id = ?", (ids[0],))[0][0]
    from urllib.parse import quote

    from curation.files import render_url

    with urllib.request.urlopen(base + render_url(sha)) as resp:
        assert resp.read(8) == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(urllib.error.HTTPError) as err:  # not even by Gradio's own file route
        urllib.request.urlopen(base + "gradio_api/file=" + quote(str(store.db_path)))
    assert err.value.code in (403, 404)
