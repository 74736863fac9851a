"""The studio's usability fixes as plain functions: stored filters shown, current choices,
errors said, notes kept, honest undo messages, grid undo, agreement without empty matrices,
the cursor saved with the rating, a note length limit, non-ASCII names."""

from __future__ import annotations

import sqlite3

import pytest
from factories import populate

from curation import grid, service, views
from curation import queue as q
from curation.agreement import agreement_report
from curation.curators import check_name
from curation.filter_form import ANY, filter_form, parse_form
from curation.ratings import latest_rating, my_latest, record_rating
from curation.service import NOTE_LIMIT, Services, Settings
from studio import handlers


@pytest.fixture
def services(store) -> Services:
    return Services(store, Settings())


def test_stored_filters_are_what_the_form_shows_and_apply_keeps_them(services, store):
    ids = populate(store, 6)
    assert filter_form(services, "alice").values["model"] == ANY
    f = parse_form("(any)", "glm-x", "0", "(any)", "(any)", "(any)", True, False)
    service.set_filters(services, "alice", f)
    form = filter_form(services, "alice")  # what a reload shows
    assert form.values["model"] == "glm-x" and form.values["round"] == "0" and form.unrated_only
    again = parse_form(*(form.values[c] for c in handlers.FILTER_CONTROLS), True, False)
    assert again == f  # pressing Apply with what is shown changes nothing
    assert service.current_queue(services, "alice") == q.build_queue(store, "alice", f)
    assert set(service.current_queue(services, "alice")) <= set(ids[1::2])


def test_filter_choices_are_current(services, store):
    ids = populate(store, 4)
    assert filter_form(services, "alice").rated_by == [ANY]
    record_rating(store, ids[0], "bob", "love")
    record_rating(store, ids[1], "José", "okay")
    assert filter_form(services, "alice").rated_by == [ANY, "José", "bob"]
    with pytest.raises(ValueError, match="not a photo choice"):
        parse_form("rose", None, None, None, None, None, False, False)


def test_non_ascii_curator_names_work(services, store):
    ids = populate(store, 2)
    assert check_name("José") == "José" and check_name("李小龙") == "李小龙"
    s = service.rate(services, check_name("José"), ids[0], "love")
    assert s.level == "ok" and my_latest(store, "José") == {ids[0]: "love"}
    with pytest.raises(ValueError, match="invalid curator name"):
        check_name("<script>")


def test_a_failed_save_says_what_went_wrong(services, store, monkeypatch):
    ids = populate(store, 2)

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(service, "record_rating_and_cursor", locked)
    s = service.rate(services, "alice", ids[0], "okay", "keep me")
    assert s.level == "error" and "Could not save okay" in s.message
    assert "database is locked" in s.message and s.candidate_id == ids[0]
    assert 'data-level="error"' in views.screen_html(s)
    assert views.error_view("boom").count('data-error="1"') == 1


def test_rerating_keeps_the_note_and_undo_of_a_note_says_so(services, store):
    ids = populate(store, 3)
    service.rate(services, "alice", ids[0], "love", "soft edges")
    service.rate(services, "alice", ids[0], "okay")  # re-rated without a new note
    assert latest_rating(store, ids[0], "alice").note == "soft edges"
    service.note(services, "alice", ids[0], "too dark")
    s = service.undo(services, "alice")
    assert (
        s.message
        == f"Undid your note on #{ids[0]}; your rating stays okay with the note “soft edges”."
    )
    s = service.undo(services, "alice")
    assert s.message == f"Undid okay on #{ids[0]}."


def test_note_length_limit(services, store):
    ids = populate(store, 2)
    s = service.rate(services, "alice", ids[0], "love", "x" * (NOTE_LIMIT + 1))
    assert s.level == "error" and f"the limit is {NOTE_LIMIT}" in s.message
    assert my_latest(store, "alice") == {}
    s = service.note(services, "alice", ids[0], "y" * (NOTE_LIMIT + 5))
    assert s.level == "error"


def test_grid_undo(services, store):
    ids = populate(store, 4)
    grid.rate(services, "gina", ids[:3], "reject")
    g = grid.undo(services, "gina")
    assert "Undid 3 grid ratings" in g.message and my_latest(store, "gina") == {}
    assert "Nothing to undo" in grid.undo(services, "gina").message
    assert 'data-rp-grid="undo"' in __import__("studio.ui", fromlist=["GRID_BAR"]).GRID_BAR


def test_agreement_hides_matrices_of_pairs_with_nothing_in_common(store):
    ids = populate(store, 4)
    record_rating(store, ids[0], "alice", "love")
    record_rating(store, ids[0], "bob", "okay")
    record_rating(store, ids[1], "carol", "love")
    html = views.agreement_html(agreement_report(store))
    assert "Confusion: alice (rows) × bob (columns)" in html
    assert "× carol" not in html and "carol (rows)" not in html


def test_the_cursor_is_saved_with_the_rating(services, store, monkeypatch):
    """A crash right after the commit (before the reply) must not resume one behind."""
    ids = populate(store, 4)
    service.screen(services, "alice")

    def crash(*args, **kwargs):
        raise SystemExit("killed")

    monkeypatch.setattr(service, "screen", crash)
    with pytest.raises(SystemExit):
        service.rate(services, "alice", ids[0], "love")
    assert my_latest(store, "alice") == {ids[0]: "love"}
    assert q.load_session(store, "alice")[0] == ids[1]


def test_pool_tab_speaks_the_curators_words_and_bounds_the_target(services, store):
    from studio.pool_tab import build_draft, pool_html, pool_report_html

    ids = populate(store, 6)
    for i, cid in enumerate(ids):
        record_rating(store, cid, "alice", ("love", "okay", "reject")[i % 3])
    v = build_draft(services, 50, 0.9, None, None)
    shown = pool_html(v) + pool_report_html(v)
    assert v.warnings and "love fraction" in " ".join(v.warnings)
    assert "--" not in " ".join(v.warnings)  # no CLI flag in the studio
    # no server path in what is read (the download link's URL is the file server's business)
    assert str(store.home) not in pool_html(v) and "<code>" not in shown
    assert "reports folder" in shown
    refused = build_draft(services, 1e12, 0.5, None, None)
    assert refused.level in ("warn", "error") and "at most 100,000" in refused.message
    assert build_draft(services, 100_000, 0.5, None, None).total == v.total


def test_a_missing_render_is_left_out_without_a_server_path(services, store):
    from pool.selection.draft import build_pool

    ids = populate(store, 2)
    for cid in ids:
        record_rating(store, cid, "alice", "love")
    sha = store.query("SELECT png_sha FROM candidates WHERE id = ?", (ids[0],))[0][0]
    store.png_path(sha).unlink()
    draft = build_pool(store)
    (gone,) = [e for e in draft.excluded if e.reason == "png_missing"]
    assert str(store.home) not in gone.detail and sha[:12] in gone.detail
