"""User journeys in the real Chromium: keyboard rating, undo, reload, two curators, grid, bad input."""

from __future__ import annotations

import pytest
from factories import populate
from test_studio_client import free_port

from app import launch
from curation.agreement import agreement_report
from curation.ratings import my_latest, record_rating
from curation.service import Services, Settings
from refpool.core.store import Store

pytestmark = pytest.mark.browser

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def studio_app(tmp_path):
    """Launch a studio on a fresh store; yields (store, url, ids). Call with n candidates."""
    launched = []

    def start(n: int = 14, **settings):
        store = Store(tmp_path / f"data{len(launched)}")
        ids = populate(store, n) if n else []
        services = Services(store, Settings(**settings))
        demo, url = launch(services, port=free_port(), prevent_thread_lock=True, quiet=True)
        launched.append((demo, store))
        return store, url, ids

    yield start
    for demo, store in launched:
        demo.close()
        store.close()


def open_page(browser, url: str, curator: str):
    page = browser.new_page(viewport={"width": 1300, "height": 950})
    page.goto(f"{url}?curator={curator}")
    page.wait_for_function("window.rp && document.getElementById('rp-view')")
    page.wait_for_function(
        "who => document.getElementById('rp-view').dataset.curator === who", arg=curator
    )
    return page


def press(page, key: str) -> None:
    """Press a key and wait until the server's reply (sent after the commit) is on screen."""
    nonce = page.evaluate("document.getElementById('rp-view').dataset.nonce")
    page.keyboard.press(key)
    page.wait_for_function(
        "n => !rp.busy && document.getElementById('rp-view').dataset.nonce !== n", arg=nonce
    )


def shown(page) -> int:
    return int(page.evaluate("document.getElementById('rp-view').dataset.cid"))


def message(page) -> str:
    return page.inner_text("#rp-view .rp-msg")


def test_keyboard_rating_undo_reload_two_tabs_and_deletion(browser, studio_app):
    store, url, ids = studio_app(14)
    page = open_page(browser, url, "alice")
    assert shown(page) == ids[0]
    keys = ["1", "2", "3", "1", "2", "3", "Space", "1", "2", "4"]
    expected = ["love", "okay", "reject", "love", "okay", "reject", "skip", "love", "okay", "skip"]
    for key in keys:
        press(page, key)
    assert my_latest(store, "alice") == dict(zip(ids[:10], expected, strict=True))
    assert shown(page) == ids[10] and "Saved skip" in message(page)
    assert page.evaluate("document.getElementById('rp-img').complete")

    press(page, "z")
    press(page, "Control+z")  # two levels of undo
    assert my_latest(store, "alice") == dict(zip(ids[:8], expected[:8], strict=True))
    assert shown(page) == ids[8] and "Undid" in message(page)

    page.reload()  # resumes from the store, not from the browser
    page.wait_for_function("window.rp && document.getElementById('rp-view')")
    page.wait_for_function(f"document.getElementById('rp-view').dataset.cid === '{ids[8]}'")
    press(page, "ArrowRight")
    assert shown(page) == ids[9]
    press(page, "k")
    assert shown(page) == ids[8]

    # two tabs of the same curator on the same candidate
    other = open_page(browser, url, "alice")
    assert shown(other) == ids[8]
    press(page, "1")
    press(other, "3")  # refused: the queue moved on in the first tab
    assert "Not saved" in message(other) and "in another tab or window" in message(other)
    assert my_latest(store, "alice")[ids[8]] == "love" and shown(other) == ids[9]
    press(other, "3")  # now on what that tab shows
    assert my_latest(store, "alice")[ids[9]] == "reject"
    press(page, "ArrowRight")  # this tab catches up by moving on itself
    assert shown(page) == ids[10]

    # the candidate on screen is deleted before the curator rates it
    doomed = shown(page)
    with store.write_lock:
        store.db.execute("DELETE FROM candidates WHERE id = ?", (doomed,))
    press(page, "2")
    assert "no longer exists" in message(page) and shown(page) != doomed
    assert doomed not in my_latest(store, "alice")

    # a note typed with n and saved with Enter goes onto the live rating
    rated = shown(page)
    press(page, "1")
    press(page, "ArrowLeft")
    assert shown(page) == rated
    page.keyboard.press("n")
    page.keyboard.type("<b>lovely</b> petals")
    nonce = page.evaluate("document.getElementById('rp-view').dataset.nonce")
    page.keyboard.press("Enter")
    page.wait_for_function("n => document.getElementById('rp-view').dataset.nonce !== n", arg=nonce)
    assert "&lt;b&gt;lovely" in page.inner_html(".rp-note")
    other.close()
    page.close()


def test_two_curators_and_the_agreement_page(browser, studio_app):
    store, url, ids = studio_app(6)
    alice, bob = open_page(browser, url, "alice"), open_page(browser, url, "bob")
    for key in ["1", "1", "2", "3", "2", "1"]:
        press(alice, key)
    for key in ["1", "2", "2", "3", "1", "1"]:
        press(bob, key)
    expected = agreement_report(store).pair("alice", "bob").kappa
    assert expected is not None and 0 < expected < 1
    alice.get_by_role("tab", name="Agreement").click()
    alice.wait_for_selector("#rp-agreement td.rp-kappa")
    assert alice.inner_text("#rp-agreement td.rp-kappa") == f"{expected:.3f}"
    assert alice.inner_text("#rp-fleiss") != "n/a"
    # a disagreement link opens that candidate in the big view
    alice.locator("#rp-agreement [data-rp-goto]").first.click()
    alice.wait_for_function(f"document.getElementById('rp-view').dataset.cid === '{ids[1]}'")
    alice.close()
    bob.close()


def test_grid_triage(browser, studio_app):
    store, url, ids = studio_app(10)
    page = open_page(browser, url, "gina")
    page.get_by_role("tab", name="Grid").click()
    page.wait_for_selector(".rp-tile img")
    tiles = page.locator(".rp-tile")
    assert tiles.count() == 10
    tiles.nth(1).click()
    tiles.nth(4).click(modifiers=["Shift"])  # range 1..4
    tiles.nth(8).click()
    assert page.evaluate("rp.selected()") == ",".join(str(i) for i in [*ids[1:5], ids[8]])
    page.click('[data-rp-grid="reject"]')
    page.wait_for_selector("text=Saved reject for 5 candidates")
    assert my_latest(store, "gina") == {i: "reject" for i in [*ids[1:5], ids[8]]}
    assert page.locator(".rp-tile .rp-reject").count() == 5
    page.close()


def test_empty_store_then_missing_png(browser, studio_app):
    store, url, _ = studio_app(0)
    page = open_page(browser, url, "alice")
    assert "no candidates yet" in message(page)
    page.keyboard.press("1")  # nothing to rate: no crash, no row
    page.wait_for_timeout(200)
    assert store.query("SELECT COUNT(*) AS n FROM ratings")[0]["n"] == 0
    ids = populate(store, 2)
    store.png_path(
        store.query("SELECT png_sha FROM candidates WHERE id = ?", (ids[0],))[0][0]
    ).unlink()
    page.reload()
    page.wait_for_selector("#rp-img.rp-missing")
    assert "missing on disk" in page.inner_text("#rp-img")
    press(page, "3")  # a broken render can still be rejected
    assert my_latest(store, "alice") == {ids[0]: "reject"} and shown(page) == ids[1]
    page.close()


def test_pool_tab_builds_a_draft_with_its_report(browser, studio_app):
    store, url, ids = studio_app(6)
    for i, cid in enumerate(ids):
        record_rating(store, cid, "alice", ("love", "okay", "reject")[i % 3])
    page = open_page(browser, url, "alice")
    page.get_by_role("tab", name="Pool").click()
    page.click("#rp-pool-btn")
    page.wait_for_selector("#rp-pool-total")
    assert page.inner_text("#rp-pool-total") == "4" and page.inner_text("#rp-pool-love") == "2"
    assert "target 178 not reached" in page.inner_text("#rp-pool")
    frame = page.frame_locator("iframe.rp-report-frame")
    assert frame.locator("h1").inner_text() == "Diversity report: draft 1"
    # a left-out candidate opens in the big view
    page.locator("#rp-pool details.rp-leftout summary").first.click()
    page.locator("#rp-pool [data-rp-goto]").first.click()
    page.wait_for_function(f"document.getElementById('rp-view').dataset.cid === '{ids[2]}'")
    page.close()
