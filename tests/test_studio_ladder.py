"""The studio shows each candidate's calibration (win rate, ladder class) and filters by it;
blind mode shows neither, since a judge's opinion would anchor an independent rating."""

from __future__ import annotations

import pytest
from factories import populate

from curation import service, views
from curation.filter_form import filter_form, parse_form
from curation.service import Services, Settings
from refpool.core.store.calibration import LadderEntry, save_ladder_entry


@pytest.fixture
def calibrated(store) -> list[int]:
    ids = populate(store, 5)
    for cid, rate, cls in (
        (ids[0], 0.1, "ceiling"),
        (ids[1], 0.5, "rung"),
        (ids[2], 0.9, "free_win"),
    ):
        save_ladder_entry(store, LadderEntry(cid, "heuristic", True, rate, 4, 0, cls))
    return ids


def test_the_view_shows_win_rate_and_class(store, calibrated):
    services = Services(store, Settings())
    s = service.screen(services, "ana", calibrated[1])
    html = views.screen_html(s)
    assert s.detail.ladder == "rung" and s.detail.win_rate == 0.5
    assert "ladder rung (policy wins 50%, heuristic judge)" in html


def test_the_queue_filters_by_ladder_class(store, calibrated):
    services = Services(store, Settings())
    for cls, want in (
        ("rung", [calibrated[1]]),
        ("ceiling", [calibrated[0]]),
        ("uncalibrated", calibrated[3:]),
    ):
        f = parse_form(None, None, None, None, None, cls, False, False)
        service.set_filters(services, "ana", f)
        assert service.current_queue(services, "ana") == want, cls
    assert filter_form(services, "ana").values["ladder"] == "uncalibrated"  # stored filter shows
    with pytest.raises(ValueError):
        parse_form(None, None, None, None, None, "gold", False, False)


def test_blind_mode_shows_no_ladder_and_ignores_its_filter(store, calibrated):
    blind = Services(store, Settings(blind=True))
    s = service.screen(blind, "ana", calibrated[1])
    assert s.detail.win_rate is None and "ladder" not in views.screen_html(s)
    assert filter_form(blind, "ana").ladder == ["(any)"]
    service.set_filters(
        blind, "ana", parse_form(None, None, None, None, None, "rung", False, False)
    )
    assert len(service.current_queue(blind, "ana")) == 5


def test_the_pool_tab_report_shows_the_ladder(store, calibrated):
    from curation.ratings import record_rating
    from studio import pool_tab as studio_tab

    for cid in calibrated:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    v = studio_tab.build_draft(Services(store, Settings()), 5, 0.5, None, None)
    assert v.report is not None
    assert "As a reward signal" in v.report.html and "heuristic" in v.report.html
