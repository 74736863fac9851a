"""A painting the gate rejected enters the pool only when the curator means it: the studio
says why, and records love or okay only when the same key is pressed on it again."""

from __future__ import annotations

from factories import add_candidate, add_photo
from test_studio_browser import browser, message, open_page, press, shown  # noqa: F401 - fixture
from test_studio_client import free_port

from app import launch
from curation import grid, service
from curation.queue import Filters
from curation.ratings import latest_rating
from curation.service import RatingRequest, Services, Settings
from refpool.core.store import candidates


def rejected_painting(store) -> int:
    cid = add_candidate(store, add_photo(store), accepted=False, seed=7)
    violation = {"code": "raw_primitive", "message": "ellipse() draws with raw p5", "line": 4}
    candidates.save(store, {"violations": [violation]}, existing=cid)
    return cid


def test_love_for_a_gate_rejected_painting_asks_first_then_records_on_the_same_key(store):
    cid = rejected_painting(store)
    services = Services(store, Settings())
    service.set_filters(services, "kim", Filters(include_failed=True))
    asked = service.rate_request(services, RatingRequest("kim", cid, "love", expected=cid))
    assert asked.outcome == "confirm" and asked.candidate_id == cid
    assert "rejected by the gate (raw_primitive)" in asked.message
    assert "Press 1 again" in asked.message
    assert latest_rating(store, cid, "kim") is None  # nothing saved on the first press

    other = service.rate(services, "kim", cid, "okay", expected=cid)  # another key: asks anew
    assert other.outcome == "confirm" and latest_rating(store, cid, "kim") is None
    saved = service.rate(services, "kim", cid, "okay", expected=cid)
    assert saved.outcome == "saved" and latest_rating(store, cid, "kim").tier == "okay"


def test_a_reject_needs_no_confirmation_and_a_passing_painting_none_either(store):
    cid = rejected_painting(store)
    passing = add_candidate(store, add_photo(store, "b.jpg"), seed=8)
    services = Services(store, Settings())
    assert service.rate(services, "kim", cid, "reject").outcome == "saved"
    assert service.rate(services, "kim", passing, "love").outcome == "saved"


def test_a_blind_curator_is_told_the_verdict_not_the_programs_rules(store):
    cid = rejected_painting(store)
    services = Services(store, Settings(blind=True))
    asked = service.rate(services, "eve", cid, "love")
    assert asked.outcome == "confirm" and "rejected by the gate," in asked.message
    assert "raw_primitive" not in asked.message


def test_in_the_browser_the_second_press_records_it(browser, store):  # noqa: F811
    cid = rejected_painting(store)
    services = Services(store, Settings())
    service.set_filters(services, "kim", Filters(include_failed=True))
    demo, url = launch(Services(store), port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        page = open_page(browser, url, "kim")
        assert shown(page) == cid
        press(page, "1")
        assert "Press 1 again" in message(page) and shown(page) == cid
        assert latest_rating(store, cid, "kim") is None
        press(page, "1")
        page.wait_for_function("() => !rp.busy")
        assert latest_rating(store, cid, "kim").tier == "love"
        page.close()
    finally:
        demo.close()


def test_a_grid_batch_leaves_gate_rejected_paintings_out_of_love_and_okay(store):
    cid = rejected_painting(store)
    passing = add_candidate(store, add_photo(store, "b.jpg"), seed=8)
    services = Services(store, Settings())
    g = grid.rate(services, "kim", [cid, passing], "love")
    assert f"1 was rejected by the gate and not rated love: #{cid}" in g.message
    assert latest_rating(store, cid, "kim") is None
    assert latest_rating(store, passing, "kim").tier == "love"
    assert grid.rate(services, "kim", [cid], "reject").level == "ok"
    assert latest_rating(store, cid, "kim").tier == "reject"
