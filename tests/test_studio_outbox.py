"""Issue 34: a key rates only what was on screen, and no rating is ever lost.

Journeys in the real Chromium that do what the attacks did: a held key, typeahead with slow
replies, a dropped connection, a reload and a studio restart mid-burst, a note typed while a
reply is on its way, and a stale second tab; then the server's side of a rating command.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid

import pytest
from factories import populate
from test_studio_browser import browser, open_page, shown  # noqa: F401 - fixture
from test_studio_client import free_port
from test_studio_journeys import TIERS, rating_log, settle, start  # noqa: F401 - fixture

from app import launch
from curation import queue, service
from curation.commands import view_token
from curation.ratings import my_latest
from curation.service import Services, Settings
from refpool.core.store import Store

pytestmark = pytest.mark.browser

# Each key's painting as the page showed it when the key went down (before the studio's own
# handler sees the key): "" when nothing was on screen.
RECORD_PRESSES = """() => { window.pressed = [];
  window.addEventListener('keydown', (e) => { if (!e.repeat) window.pressed.push(
    [e.key, document.getElementById('rp-img')?.dataset.cid || '']); }, true); }"""


def slow_replies(monkeypatch, seconds: float) -> None:
    """Every view the studio builds takes `seconds` longer (as on a loaded machine)."""
    load = service.load_detail

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return load(*args, **kwargs)

    monkeypatch.setattr(service, "load_detail", slow)


def outbox(page) -> str:
    return page.evaluate("document.getElementById('rp-outbox')?.textContent || ''")


def unsaved(page) -> int:
    return page.evaluate("rp.unsaved()")


def test_a_held_key_rates_one_painting(browser, start):  # noqa: F811
    store, url, ids = start(10)
    page = open_page(browser, url, "alice")
    page.evaluate(  # one press, then the auto-repeats of a key held down
        """() => { for (let i = 0; i < 8; i++) document.dispatchEvent(new KeyboardEvent(
             'keydown', { key: '1', repeat: i > 0, bubbles: true, cancelable: true })); }"""
    )
    settle(page)
    page.keyboard.down("2")  # a real held key: Chromium repeats it while it is down
    page.wait_for_timeout(700)
    page.keyboard.up("2")
    settle(page)
    assert rating_log(store, "alice") == [(ids[0], "love", 0), (ids[1], "okay", 0)]
    assert shown(page) == ids[2]
    page.close()


def test_keys_rate_what_was_shown_and_keys_with_nothing_shown_are_not_applied(browser, start):  # noqa: F811
    """Ten keys in one task: the painting on screen and the three prefetched ones show at
    once, so four keys are each bound to a displayed painting; the other six were pressed
    while nothing was shown, and the page counts them as not applied."""
    store, url, ids = start(14)
    page = open_page(browser, url, "alice")
    keys = "1231231231"
    page.evaluate(RECORD_PRESSES)
    page.evaluate(
        "keys => { for (const key of keys) document.dispatchEvent("
        "new KeyboardEvent('keydown', { key, bubbles: true })); }",
        list(keys),
    )
    settle(page)
    pressed = page.evaluate("window.pressed")
    bound = [(int(cid), TIERS[k]) for k, cid in pressed if cid]
    assert bound == [(c, TIERS[k]) for c, k in zip(ids[:4], keys, strict=False)]
    assert rating_log(store, "alice") == [(c, t, 0) for c, t in bound]
    assert "6 keys were not applied" in outbox(page)
    assert shown(page) == ids[4]
    page.close()


def test_typeahead_with_slow_replies_rates_only_displayed_paintings(browser, start, monkeypatch):  # noqa: F811
    store, url, ids = start(16)
    page = open_page(browser, url, "alice")
    slow_replies(monkeypatch, 0.25)
    page.evaluate(RECORD_PRESSES)
    page.keyboard.type("1231231231", delay=62)  # 16 keys a second
    settle(page)
    pressed = page.evaluate("window.pressed")
    bound = [(int(cid), TIERS[k], 0) for k, cid in pressed if cid]
    assert rating_log(store, "alice") == bound  # each on what was on screen, in order
    assert len(bound) >= 4  # the ones on screen and the prefetched ones, at least
    # the page counts the keys pressed with nothing on screen since the last one it applied
    last = max(i for i, (_, cid) in enumerate(pressed) if cid)
    trailing = len(pressed) - 1 - last
    if trailing:
        assert f"{trailing} key" in outbox(page) and "not applied" in outbox(page)
    page.close()


# Stand-in for a slow page: the key handler's MutationObserver starts watching only once the
# first view is already on screen (as when Gradio renders the load event's reply before the
# studio's script has run), so no mutation of that view ever reaches it.
LATE_OBSERVER = """(() => { const observe = MutationObserver.prototype.observe;
  MutationObserver.prototype.observe = function (...args) {
    const wait = () => document.getElementById('rp-view')?.dataset.curator
      ? observe.apply(this, args) : setTimeout(wait, 20);
    wait(); }; })()"""


def test_a_view_drawn_before_the_script_started_is_rated_by_the_first_key(browser, start):  # noqa: F811
    store, url, ids = start(6)
    page = browser.new_page()
    page.add_init_script(LATE_OBSERVER)
    page.goto(f"{url}?curator=alice")
    page.wait_for_function("window.rp && document.getElementById('rp-view')?.dataset.curator")
    page.wait_for_timeout(300)  # the observer is watching by now; the view does not change
    page.keyboard.press("1")
    settle(page)
    assert rating_log(store, "alice") == [(ids[0], "love", 0)]
    assert "not applied" not in outbox(page)
    page.close()


def test_a_dropped_connection_keeps_the_keys_and_sends_them_when_it_is_back(browser, start):  # noqa: F811
    store, url, ids = start(8)
    page = open_page(browser, url, "alice")
    page.route("**/gradio_api/run/**", lambda route: route.abort())  # the network drops
    page.keyboard.press("1")
    page.wait_for_function("rp.failure !== null")
    assert "unreachable" in outbox(page) and "1 rating unsaved" in outbox(page)
    page.keyboard.press("2")  # the page stopped advancing: nothing is on screen to rate
    assert page.evaluate("document.getElementById('rp-img').dataset.cid") == ""
    assert "1 key was not applied" in outbox(page)
    assert rating_log(store, "alice") == []
    page.unroute("**/gradio_api/run/**")  # back: the kept command is sent again
    page.wait_for_function("rp.unsaved() === 0 && rp.failure === null", timeout=15000)
    settle(page)
    assert rating_log(store, "alice") == [(ids[0], "love", 0)]
    assert shown(page) == ids[1]
    page.close()


def test_a_reload_mid_burst_sends_every_pending_key_once(browser, start, monkeypatch):  # noqa: F811
    store, url, ids = start(12, prefetch=8)
    page = open_page(browser, url, "alice")
    slow_replies(monkeypatch, 0.4)
    page.keyboard.type("12312312", delay=20)  # all eight shown at once (eight prefetched)
    assert unsaved(page) >= 5 and "unsaved" in outbox(page)
    leaving = "(() => { const e = new Event('beforeunload', { cancelable: true });"
    leaving += " window.dispatchEvent(e); return e.defaultPrevented; })()"
    assert page.evaluate(leaving)  # the browser asks "leave page?"
    page.once("dialog", lambda dialog: dialog.accept())
    page.reload()
    page.wait_for_function("window.rp && document.getElementById('rp-view')?.dataset.curator")
    page.wait_for_function("rp.unsaved() === 0 && !rp.busy && rp.queue.length === 0")
    want = [(c, TIERS[k], 0) for c, k in zip(ids, "12312312", strict=False)]
    assert rating_log(store, "alice") == want
    assert not page.evaluate(leaving)  # nothing unsaved: no warning
    page.close()


def launch_on(store: Store, port: int, **settings):
    for _ in range(50):  # the port is free again a moment after the last studio closed
        try:
            return launch(
                Services(store, Settings(**settings)),
                port=port,
                prevent_thread_lock=True,
                quiet=True,
            )[0]
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"port {port} never came free")


def test_a_studio_restart_mid_burst_loses_nothing(browser, tmp_path):  # noqa: F811
    store = Store(tmp_path / "data")
    ids = populate(store, 8)
    port = free_port()
    demo = launch_on(store, port)
    page = open_page(browser, f"http://127.0.0.1:{port}/", "alice")
    page.keyboard.press("1")
    settle(page)
    demo.close()  # the studio stops
    page.keyboard.press("2")  # shown (the next painting was prefetched), then sending fails
    page.wait_for_function("rp.failure !== null", timeout=15000)
    assert "unreachable" in outbox(page) and "1 rating unsaved" in outbox(page)
    assert "Saving" not in page.inner_text("#rp-view .rp-msg")
    demo = launch_on(store, port)  # ... and starts again on the same store
    try:
        deadline = time.monotonic() + 20
        while my_latest(store, "alice") != {ids[0]: "love", ids[1]: "okay"}:
            assert time.monotonic() < deadline, rating_log(store, "alice")
            time.sleep(0.1)
        assert rating_log(store, "alice") == [(ids[0], "love", 0), (ids[1], "okay", 0)]
    finally:
        page.close()
        demo.close()
        store.close()


def test_a_note_typed_while_a_reply_is_coming_is_kept_whole(browser, start, monkeypatch):  # noqa: F811
    store, url, ids = start(6)
    page = open_page(browser, url, "alice")
    slow_replies(monkeypatch, 0.5)
    page.keyboard.press("1")
    page.keyboard.press("n")
    page.keyboard.type("first words, then the rest", delay=30)
    settle(page)
    box = "#rp-note textarea, #rp-note input"
    assert page.locator(box).first.input_value() == "first words, then the rest"
    assert my_latest(store, "alice") == {ids[0]: "love"}
    page.close()


def test_a_stale_tab_cannot_rate_a_painting_it_never_showed(browser, start):  # noqa: F811
    store, url, ids = start(8)
    fresh, stale = open_page(browser, url, "alice"), open_page(browser, url, "alice")
    fresh.keyboard.type("111")
    settle(fresh)
    assert shown(stale) == ids[0]  # it never showed ids[1] or ids[2]
    stale.evaluate(  # z, then a key before the undo's reply
        "() => { for (const key of ['z', '3']) document.dispatchEvent("
        "new KeyboardEvent('keydown', { key, bubbles: true })); }"
    )
    settle(stale)
    assert my_latest(store, "alice") == {ids[0]: "love", ids[1]: "love"}  # ids[2] undone only
    assert "1 key was not applied" in outbox(stale)
    fresh.close()
    stale.close()


# -- the server's side of a command ---------------------------------------------------------
def command(services: Services, who: str, cid: int, tier: str, token: str | None = None) -> dict:
    token = view_token(services.store, who, cid) if token is None else token
    return {"id": uuid.uuid4().hex, "cid": cid, "tier": tier, "token": token}


def rate(services: Services, who: str, cmd: dict) -> service.Screen:
    return service.rate(
        services, who, cmd["cid"], cmd["tier"], expected=cmd["cid"], command_id=cmd["id"],
        token=cmd["token"],
    )  # fmt: skip


def test_a_command_is_applied_once_and_only_for_a_shown_painting(store):
    services = Services(store, Settings())
    ids = populate(store, 4)
    service.screen(services, "alice")
    first = command(services, "alice", ids[0], "love")
    assert rate(services, "alice", first).outcome == "saved"
    again = rate(services, "alice", first)  # a retry, or a replay after a reload
    assert again.outcome == "duplicate" and "Already saved love" in again.message
    forged = command(services, "alice", ids[1], "reject", token="0" * 24)
    refused = rate(services, "alice", forged)
    assert refused.outcome == "refused" and "never showed" in refused.message
    bobs = command(services, "bob", ids[1], "reject")  # a token shown to another curator
    assert rate(services, "alice", bobs).outcome == "refused"
    assert rating_log(store, "alice") == [(ids[0], "love", 0)]
    with pytest.raises(sqlite3.IntegrityError):  # the store itself refuses a second copy
        store.db.execute(
            "INSERT INTO ratings (candidate_id, curator, tier, command_id) VALUES (?, ?, ?, ?)",
            (ids[2], "alice", "okay", first["id"]),
        )
    assert json.loads(json.dumps(first))  # the page's JSON, as sent


def test_one_key_is_one_write_one_session_load_and_one_queue(store, monkeypatch):
    services = Services(store, Settings())
    ids = populate(store, 6)
    service.screen(services, "alice")
    writes: list[str] = []
    store.db.set_trace_callback(
        lambda sql: (
            writes.append(sql.split()[0].upper())
            if sql.split()[0].upper() in ("INSERT", "UPDATE", "DELETE", "COMMIT", "REPLACE")
            else None
        )
    )
    loads, builds = [], []
    load_session, queue_for = queue.load_session, service.queue_for
    monkeypatch.setattr(queue, "load_session", lambda *a: loads.append(1) or load_session(*a))
    monkeypatch.setattr(service, "queue_for", lambda *a: builds.append(1) or queue_for(*a))
    s = rate(services, "alice", command(services, "alice", ids[0], "okay"))
    store.db.set_trace_callback(None)
    assert s.outcome == "saved" and s.candidate_id == ids[1]
    assert writes == ["INSERT", "INSERT", "COMMIT"]  # the rating and the cursor, one commit
    assert len(loads) == 1 and len(builds) == 1
