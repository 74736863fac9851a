"""Curation helpers without a browser: ratings, undo, queue, agreement, import/export, accounts."""

from __future__ import annotations

import json

import pytest
from factories import populate

from curation import queue as q
from curation.agreement import agreement_report, cohen_kappa, confusion_matrix, fleiss_kappa
from curation.curators import add_curator, authenticate, check_name, hash_password, verify_password
from curation.ratings import final_tiers, my_latest, record_rating, set_note, undo_last
from curation.transfer import export_ratings, import_ratings, published_name


# -- ratings and undo --------------------------------------------------------------------------
def test_undo_several_levels_restores_previous_decisions(store):
    a, b = populate(store, 2)
    record_rating(store, a, "alice", "love")
    record_rating(store, b, "alice", "okay")
    record_rating(store, a, "alice", "reject")  # changed her mind
    assert my_latest(store, "alice") == {a: "reject", b: "okay"}
    assert [r["tier"] for r in undo_last(store, "alice")] == ["reject"]
    assert my_latest(store, "alice") == {a: "love", b: "okay"}
    undo_last(store, "alice")
    undo_last(store, "alice")
    assert my_latest(store, "alice") == {}
    assert undo_last(store, "alice") == []
    # nothing is deleted: the log still holds all three rows, flagged undone
    assert store.query("SELECT COUNT(*) AS n FROM ratings WHERE undone = 1")[0]["n"] == 3


def test_undo_is_per_curator(store):
    (a,) = populate(store, 1)
    record_rating(store, a, "alice", "love")
    record_rating(store, a, "bob", "reject")
    undo_last(store, "alice")
    assert final_tiers(store) == {a: "reject"}
    assert my_latest(store, "bob") == {a: "reject"}


def test_note_appends_a_copy_of_the_live_rating(store):
    (a,) = populate(store, 1)
    assert set_note(store, a, "alice", "later") is None  # not rated yet: nothing to attach to
    record_rating(store, a, "alice", "okay")
    set_note(store, a, "alice", "petals too flat")
    rows = store.query("SELECT tier, note FROM ratings WHERE undone = 0 ORDER BY id")
    assert [tuple(r) for r in rows][-1] == ("okay", "petals too flat")
    undo_last(store, "alice")  # undo reverts the note, not the rating
    assert my_latest(store, "alice") == {a: "okay"}


def test_final_tier_rule_unchanged(store):
    a, b, c = populate(store, 3)
    for who, tier in (("x", "love"), ("y", "love"), ("z", "okay")):
        record_rating(store, a, who, tier)
    record_rating(store, b, "x", "love")
    record_rating(store, b, "y", "reject")  # one veto is enough
    record_rating(store, c, "x", "love")
    record_rating(store, c, "y", "okay")  # tie -> okay
    record_rating(store, c, "z", "skip")  # skip is no vote
    assert final_tiers(store) == {a: "love", b: "reject", c: "okay"}


# -- queue -------------------------------------------------------------------------------------
def test_queue_filters_and_unrated_first(store):
    ids = populate(store, 9, photos=3, models=("procedural", "glm-x", "kimi"))
    assert q.build_queue(store, "alice") == ids
    assert q.build_queue(store, "alice", q.Filters(generator="kimi")) == ids[2::3]
    assert q.build_queue(store, "alice", q.Filters(round=1)) == ids[1::3]
    record_rating(store, ids[0], "bob", "love")
    record_rating(store, ids[1], "alice", "reject")
    assert q.build_queue(store, "alice", q.Filters(tier="love")) == [ids[0]]
    assert q.build_queue(store, "alice", q.Filters(curator="bob")) == [ids[0]]
    assert ids[1] not in q.build_queue(store, "alice", q.Filters(unrated_only=True))
    mine = {ids[0]: "love", ids[1]: "skip"}
    assert q.next_unrated(ids, mine, None) == ids[2]
    assert q.next_unrated(ids, mine, ids[8]) == ids[2]  # wraps
    all_rated = {i: "okay" for i in ids} | {ids[1]: "skip"}
    assert q.next_unrated(ids, all_rated, ids[4]) == ids[1]  # skipped ones come back last
    assert q.next_unrated(ids, {i: "okay" for i in ids}, ids[4]) is None
    with pytest.raises(ValueError, match="tier filter"):
        q.build_queue(store, "alice", q.Filters(tier="great"))


def test_step_and_resolve_survive_a_vanished_current(store):
    ids = [3, 5, 9, 12]
    assert q.step(ids, 5, 1) == 9 and q.step(ids, 5, -1) == 3
    assert q.step(ids, 12, 1) == 12 and q.step(ids, 3, -1) == 3  # clamps at the ends
    assert q.step(ids, 7, 1) == 9 and q.step(ids, 7, -1) == 5  # 7 left the queue
    assert q.resolve_current(ids, {}, 9) == (9, False)
    assert q.resolve_current(ids, {9: "love"}, 7) == (12, True)


def test_session_round_trip(store):
    q.save_session(store, "alice", 42, q.Filters(generator="kimi", unrated_only=True))
    q.save_session(store, "alice", 43)  # moving keeps the filters
    cid, filters = q.load_session(store, "alice")
    assert cid == 43 and filters == q.Filters(generator="kimi", unrated_only=True)
    assert q.load_session(store, "nobody") == (None, q.Filters())


def test_progress_counts_against_target(store):
    ids = populate(store, 4)
    record_rating(store, ids[0], "alice", "love")
    record_rating(store, ids[1], "alice", "okay")
    record_rating(store, ids[2], "alice", "skip")
    p = q.progress(store, "alice", ids, target=10)
    assert (p.total, p.rated_by_me, p.skipped_by_me, p.love, p.okay, p.pool) == (4, 2, 1, 1, 1, 2)
    assert "2/10" in p.text()


# -- agreement ----------------------------------------------------------------------------------
def test_cohen_kappa_known_value():
    # Wikipedia's example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> kappa 0.4
    a = ["love"] * 25 + ["reject"] * 25
    b = ["love"] * 20 + ["reject"] * 5 + ["love"] * 10 + ["reject"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["love", "okay"], ["love", "okay"]) == pytest.approx(1.0)
    assert cohen_kappa(["love"] * 3, ["love"] * 3) is None  # undefined, not a fake 1.0
    assert cohen_kappa([], []) is None
    assert confusion_matrix(["love", "okay"], ["okay", "okay"]) == [[0, 1, 0], [0, 1, 0], [0, 0, 0]]


def test_fleiss_kappa_known_value():
    # Fleiss (1971) as worked on Wikipedia: 10 items, 14 raters, 5 categories -> 0.210
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    assert fleiss_kappa(table) == pytest.approx(0.210, abs=0.001)
    with pytest.raises(ValueError):
        fleiss_kappa([[1, 1, 0], [1, 0, 0]])


def test_agreement_report_from_store(store):
    ids = populate(store, 4)
    for cid, (a, b) in zip(
        ids, [("love", "love"), ("okay", "okay"), ("reject", "okay"), ("love", "okay")], strict=True
    ):
        record_rating(store, cid, "alice", a)
        record_rating(store, cid, "bob", b)
    r = agreement_report(store)
    pair = r.pair("alice", "bob")
    assert pair.shared == 4
    # po = 0.5; pe = (2*1 + 1*3 + 1*0) / 16 = 5/16 -> kappa = (0.5 - 0.3125) / 0.6875
    assert pair.kappa == pytest.approx((0.5 - 5 / 16) / (11 / 16))
    # Fleiss pools the marginals: p = 3/8, 4/8, 1/8 -> pe = 26/64; P-bar = 0.5
    assert r.fleiss == pytest.approx((0.5 - 26 / 64) / (1 - 26 / 64)) and r.fleiss_items == 4
    assert r.disagreements == [ids[2], ids[3]]
    assert q.build_queue(store, "alice", q.Filters(disagreements=True)) == [ids[2], ids[3]]


# -- import / export -----------------------------------------------------------------------------
def test_export_import_round_trip_csv_and_json(store, tmp_path):
    ids = populate(store, 3)
    record_rating(store, ids[0], "alice", "love", note='says "wow", <b>bold</b>')
    record_rating(store, ids[1], "bob", "reject")
    for fmt in ("csv", "json"):
        text = export_ratings(store, fmt)
        path = tmp_path / f"r.{fmt}"
        path.write_text(text)
        summary = import_ratings(store, path)
        assert summary.imported == 0 and summary.unchanged == 2, fmt  # idempotent
    rows = json.loads(export_ratings(store, "json"))
    assert {(r["candidate_id"], r["curator"], r["tier"]) for r in rows} == {
        (ids[0], "alice", "love"),
        (ids[1], "bob", "reject"),
    }
    assert rows[0]["note"] == 'says "wow", <b>bold</b>'


def test_published_format_maps_nope_and_meh(store, tmp_path):
    ids = populate(store, 4)
    path = tmp_path / "ratings.json"
    path.write_text(
        json.dumps(
            {
                published_name(ids[0]): "love",
                f"{ids[1]:06d}.png": "okay",
                "renders/" + published_name(ids[2]): "nope",
                published_name(ids[3]): "meh",
                "hibiscus_glm_07.png": "love",
            }
        )
    )
    with pytest.raises(ValueError, match="which curator"):
        import_ratings(store, path)
    summary = import_ratings(store, path, curator="published")
    assert summary.imported == 4 and summary.unmatched == ["hibiscus_glm_07.png"]
    assert my_latest(store, "published") == dict(
        zip(ids, ["love", "okay", "reject", "skip"], strict=True)
    )
    assert final_tiers(store) == {ids[0]: "love", ids[1]: "okay", ids[2]: "reject"}  # meh stays out
    back = json.loads(export_ratings(store, "published", curator="published"))
    assert back[published_name(ids[2])] == "nope" and back[published_name(ids[3])] == "meh"
    assert published_name(ids[3]) not in json.loads(export_ratings(store, "published"))


def test_import_matches_a_releases_own_file_names(store, tmp_path):
    """A curator re-rating a published release uses its names (`images/love_000042.png`,
    `okay_000043.png`); they came back as "matched no candidate"."""
    a, b, c = populate(store, 3)
    path = tmp_path / "release-ratings.json"
    names = {f"images/love_{a:06d}.png": "okay", f"okay_{b:06d}.png": "love"}
    path.write_text(json.dumps(names | {f"rung_{c:06d}.png": "nope"}))
    summary = import_ratings(store, path, curator="lead")
    assert summary.unmatched == [] and summary.imported == 3
    assert my_latest(store, "lead") == {a: "okay", b: "love", c: "reject"}


def test_import_reports_bad_rows(store, tmp_path):
    (a,) = populate(store, 1)
    path = tmp_path / "bad.csv"
    path.write_text(f"candidate_id,curator,tier\n{a},alice,great\nxyz,alice,love\n999,alice,love\n")
    summary = import_ratings(store, path)
    assert summary.imported == 0 and len(summary.invalid) == 2 and summary.unmatched == ["999"]
    with pytest.raises(FileNotFoundError):
        import_ratings(store, tmp_path / "nope.csv")


# -- curators -------------------------------------------------------------------------------------
def test_passwords_are_salted_hashes(store):
    h1, h2 = hash_password("correct horse"), hash_password("correct horse")
    assert h1 != h2 and "correct" not in h1 and h1.startswith("scrypt$")
    assert verify_password("correct horse", h1) and not verify_password("wrong", h1)
    add_curator(store, "alice", "correct horse")
    assert authenticate(store, "alice", "correct horse")
    assert not authenticate(store, "alice", "nope") and not authenticate(store, "eve", "x")
    stored = store.query("SELECT password_hash FROM curators")[0][0]
    assert "correct horse" not in stored
    with pytest.raises(ValueError, match="8 characters"):
        add_curator(store, "bob", "short")
    with pytest.raises(ValueError, match="invalid curator name"):
        check_name("<script>")


def test_m003_upgrades_an_m001_database(tmp_path):
    import sqlite3

    from refpool.core.store import Store, migrations

    db = sqlite3.connect(tmp_path / "refpool.db", isolation_level=None)
    db.row_factory = sqlite3.Row
    saved = migrations.MIGRATIONS
    try:
        migrations.MIGRATIONS = [migrations.m001_initial]
        migrations.apply(db)
    finally:
        migrations.MIGRATIONS = saved
    db.execute("INSERT INTO ratings (candidate_id, curator, tier) VALUES (1, 'old', 'love')")
    db.close()
    store = Store(tmp_path)  # applies the rest, keeping old rows
    names = {r[0] for r in store.query("SELECT name FROM _migrations")}
    assert "m003_curation_sessions" in names
    assert store.query("SELECT curator FROM ratings")[0][0] == "old"
    q.save_session(store, "old", 1)
    assert q.load_session(store, "old")[0] == 1
    store.close()
