"""The studio's service layer and HTML, without a browser: resume, bad input, escaping, CLI."""

from __future__ import annotations

import json

import pytest
from factories import add_candidate, add_photo, populate

from curation import grid, service, views
from curation.agreement import agreement_report
from curation.detail import load_detail
from curation.ratings import my_latest, record_rating
from curation.service import Services, Settings
from refpool import cli


@pytest.fixture
def services(store) -> Services:
    return Services(store, Settings(prefetch=2))


def test_rating_advances_and_a_new_session_resumes(services, store):
    ids = populate(store, 5)
    s = service.screen(services, "alice")
    assert s.candidate_id == ids[0] and s.next_id == ids[1] and len(s.prefetch) >= 2
    s = service.rate(services, "alice", ids[0], "love")
    assert s.candidate_id == ids[1] and s.level == "ok" and "Saved love" in s.message
    assert my_latest(store, "alice") == {ids[0]: "love"}  # committed before the screen exists
    s = service.rate(services, "alice", ids[1], "skip")
    assert s.candidate_id == ids[2]
    # a "reload": nothing from the previous screens, only the store
    fresh = Services(type(store)(store.home), services.settings)
    assert service.screen(fresh, "alice").candidate_id == ids[2]
    # undo goes back to the undone candidate and keeps the cursor there
    assert service.undo(services, "alice").candidate_id == ids[1]
    assert service.screen(fresh, "alice").candidate_id == ids[1]
    assert service.navigate(services, "alice", ids[1], 1).candidate_id == ids[2]
    assert service.navigate(services, "alice", ids[2], -1).candidate_id == ids[1]


def test_skipped_come_back_after_the_rest(services, store):
    ids = populate(store, 3)
    service.rate(services, "alice", ids[0], "skip")
    service.rate(services, "alice", ids[1], "okay")
    s = service.rate(services, "alice", ids[2], "okay")
    assert s.candidate_id == ids[0]
    s = service.rate(services, "alice", ids[0], "love")
    assert "Everything in this queue is rated" in s.message


def test_empty_store_says_what_to_do(services):
    s = service.screen(services, "alice")
    assert s.detail is None and s.level == "warn" and "no candidates" in s.message
    assert "refpool demo" in views.screen_html(s)
    g = grid.show(services, "alice")
    assert g.tiles == [] and "No candidates" in g.message


def test_candidate_deleted_while_shown(services, store):
    ids = populate(store, 3)
    service.screen(services, "alice")
    with store.write_lock:
        store.db.execute("DELETE FROM candidates WHERE id = ?", (ids[0],))
    s = service.rate(services, "alice", ids[0], "love")
    assert s.level == "warn" and "no longer exists" in s.message and s.candidate_id == ids[1]
    assert store.query("SELECT COUNT(*) AS n FROM ratings")[0]["n"] == 0
    # the stored cursor pointing at a deleted row also recovers on reload
    service.goto(services, "alice", ids[1])
    with store.write_lock:
        store.db.execute("DELETE FROM candidates WHERE id = ?", (ids[1],))
    s = service.screen(services, "alice")
    assert s.candidate_id == ids[2] and s.level == "warn"


def test_missing_png_is_shown_not_crashed(services, store):
    (a,) = populate(store, 1)
    sha = store.query("SELECT png_sha FROM candidates")[0][0]
    store.png_path(sha).unlink()
    s = service.screen(services, "alice")
    assert s.detail.png_url is None and "missing on disk" in s.detail.png_problem
    html = views.screen_html(s)
    assert 'class="rp-missing"' in html and "re-render" in html
    assert service.rate(services, "alice", a, "reject").level == "ok"  # still ratable


def test_two_tabs_rating_the_same_item(services, store):
    ids = populate(store, 2)
    tab1 = service.screen(services, "alice")
    tab2 = service.screen(services, "alice")
    service.rate(services, "alice", ids[0], "love", seen=tab1.detail.seen)
    s = service.rate(services, "alice", ids[0], "okay", seen=tab2.detail.seen)
    assert s.level == "warn" and "another tab" in s.message and "love" in s.message
    assert my_latest(store, "alice") == {ids[0]: "okay"}
    assert store.query("SELECT COUNT(*) AS n FROM ratings")[0]["n"] == 2  # both kept in the log


def test_blind_mode_hides_models_and_other_curators(store):
    ids = populate(store, 2)
    record_rating(store, ids[0], "bob", "love", note="bob's secret")
    blind = Services(store, Settings(blind=True))
    s = service.screen(blind, "alice")
    html = views.screen_html(s)
    assert s.detail.generator is None and s.detail.others == {}
    assert "procedural" not in html and "bob" not in html and "painting 1 of 2" in html
    f = service.clean_filters(blind, service.q.Filters(generator="procedural", curator="bob"))
    assert f.generator is None and f.curator is None
    assert "hidden in blind mode" in views.agreement_html(agreement_report(store), blind=True)
    open_s = service.screen(Services(store, Settings()), "alice", ids[0])
    assert open_s.detail.others["bob"]["tier"] == "love"


def test_everything_user_supplied_is_escaped(services, store):
    pid = add_photo(
        store, "x.jpg", author='<img src=x onerror="alert(1)">', url="javascript:alert(1)"
    )
    cid = add_candidate(store, pid)
    evil_src = "</code></pre><script>alert('p')</script>"
    sha = store.put_program(evil_src)
    crit = {
        "critic": "<b>c</b>",
        "scores": {},
        "advice": "<script>alert('c')</script>",
        "summary": "",
    }
    with store.write_lock:
        store.db.execute(
            "UPDATE candidates SET program_sha = ?, critique = ? WHERE id = ?",
            (sha, json.dumps(crit), cid),
        )
    record_rating(store, cid, "bob", "okay", note="<script>alert('n')</script>")
    s = service.rate(services, "alice", cid, "love", note="<i>mine</i>")
    html = views.screen_html(service.screen(services, "alice", cid))
    assert "<script>" not in html and "onerror=" not in html.replace("onerror=&quot;", "")
    assert "&lt;script&gt;alert(&#x27;p&#x27;)" in html  # program shown, escaped
    assert "&lt;script&gt;alert(&#x27;c&#x27;)" in html  # critique
    assert "&lt;script&gt;alert(&#x27;n&#x27;)" in html  # bob's note
    assert "&lt;i&gt;mine&lt;/i&gt;" in html  # my note
    assert 'href="javascript:' not in html  # only http(s) source links become links
    assert s.level == "ok"


def test_grid_rates_a_batch_and_one_undo_reverts_it(services, store):
    ids = populate(store, 6)
    g = grid.show(services, "alice")
    assert [t.id for t in g.tiles] == ids and all(t.thumb_url for t in g.tiles)
    g = grid.rate(services, "alice", ids[:4], "reject")
    assert "Saved reject for 4" in g.message
    assert [t.my_tier for t in g.tiles][:5] == ["reject"] * 4 + [None]
    service.rate(services, "alice", ids[5], "love")
    service.undo(services, "alice")  # the single rating
    s = service.undo(services, "alice")  # the whole batch
    assert "4 grid ratings" in s.message and my_latest(store, "alice") == {}
    assert "Select some" in grid.rate(services, "alice", [], "love").message
    assert grid.parse_ids("1, 2 3") == [1, 2, 3]
    with pytest.raises(ValueError, match="not a candidate id"):
        grid.parse_ids("1,x")


def test_history_shows_rounds_with_critiques(services, store):
    pid = add_photo(store)
    r0 = add_candidate(store, pid, round_=0, seed=1)
    r1 = add_candidate(store, pid, round_=1, seed=2, parent_id=r0)
    r2 = add_candidate(store, pid, round_=2, seed=3, parent_id=r1)
    for cid in (r0, r1, r2):
        hist = load_detail(store, cid, "alice").history
        assert [h.round for h in hist] == [0, 1, 2] and all(h.thumb_url for h in hist)
        assert "more bleed" in hist[0].critique


def test_cli_rate_export_import_and_curators(store, tmp_path, capsys, monkeypatch):
    ids = populate(store, 3)
    assert cli.main(["rate", str(ids[0]), "love", "--curator", "alice", "--note", "crisp"]) == 0
    assert cli.main(["rate", "9999", "okay", "--curator", "alice"]) == 1
    assert "does not exist" in capsys.readouterr().err
    out = tmp_path / "pub.json"
    assert cli.main(["ratings", "export", "--format", "published", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == {f"candidate_{ids[0]}.png": "love"}
    assert cli.main(["ratings", "import", str(out)]) == 1  # published needs --curator
    assert cli.main(["ratings", "import", str(out), "--curator", "carol"]) == 0
    assert my_latest(store, "carol") == {ids[0]: "love"}
    monkeypatch.setenv("ALICE_PW", "a long secret")
    assert cli.main(["curators", "add", "alice", "--password-env", "ALICE_PW"]) == 0
    printed = capsys.readouterr().out
    assert "a long secret" not in printed
    assert cli.main(["curators", "add", "bob", "--password-env", "UNSET_VAR"]) == 1


def test_every_cli_option_has_help():
    import argparse

    def walk(parser, path):
        for act in parser._actions:
            if isinstance(act, argparse._SubParsersAction):
                for choice in act._choices_actions:
                    assert choice.help, f"{path} {choice.dest} has no help"
                for name, sub in act.choices.items():
                    if path or name in ("studio", "rate", "ratings", "curators"):
                        walk(sub, f"{path} {name}")
            elif path:
                assert act.help, f"{path}: {act.dest} has no help"

    walk(cli.build_parser(), "")


def test_the_next_candidates_thumbnails_are_made_before_they_are_shown(store):
    """Making a thumbnail took half the server's time per keypress; it is now done in the
    background for what the next keypresses will show."""
    from curation import files
    from refpool.core.store import candidates

    ids = populate(store, 4)
    service.screen(Services(store, Settings(prefetch=2)), "ana", ids[0])
    files._warmer.submit(lambda: None).result()  # the warmer works in order: wait for it
    made = {p.name.split("_")[0] for p in (store.home / "thumbs").rglob("*.jpg")}
    nxt = candidates.get_many(store, ids[1:3])
    assert {c.png_sha for c in nxt.values()} <= made


def test_a_rating_off_the_queue_is_refused_and_blames_another_tab_only_when_it_was(services, store):
    ids = populate(store, 4)
    services.cursor_tab["alice"] = "tab-1"
    service.screen(services, "alice")  # the queue is at ids[0]
    s = service.rate(services, "alice", ids[1], "love", expected=ids[1], tab="tab-1")
    assert s.level == "error" and s.candidate_id == ids[0]
    assert f"Not saved: the key was for #{ids[1]}" in s.message and f"#{ids[0]}" in s.message
    assert "another tab" not in s.message and my_latest(store, "alice") == {}
    s = service.rate(services, "alice", ids[1], "love", expected=ids[1], tab="tab-2")
    assert "in another tab or window" in s.message and my_latest(store, "alice") == {}
    s = service.rate(services, "alice", ids[0], "okay", expected=ids[0], tab="tab-2")
    assert s.level == "ok" and my_latest(store, "alice") == {ids[0]: "okay"}
    # a curator with no place in a queue yet (a first API call) has nothing to compare with
    assert service.rate(services, "bob", ids[2], "love", expected=ids[2]).level == "ok"


def test_a_withdrawn_photos_paintings_leave_every_queue(services, store):
    from refpool.core.store import candidates, photo_corrections

    ids = populate(store, 6, photos=2)
    photo = candidates.get(store, ids[0]).photo_id
    theirs = {i for i in ids if candidates.get(store, i).photo_id == photo}
    photo_corrections.withdraw(store, photo, "the author asked us to remove it")
    queue = service.current_queue(services, "alice")
    assert queue and not theirs & set(queue) and set(queue) == set(ids) - theirs
