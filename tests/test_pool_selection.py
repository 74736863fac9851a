"""Selection constraints, drafts and versions on a real store built by tests/factories.py."""

from __future__ import annotations

import pytest
from factories import add_candidate, add_photo, populate

from curation.ratings import record_rating
from pool.catalog import load_entries
from pool.dataset.release import release
from pool.selection.draft import SelectionError, build_pool, latest_draft, save_draft
from pool.selection.versions import VersionError, diff_versions, get_version, list_versions


def rate_all(store, ids, tier_of):
    for cid in ids:
        record_rating(store, cid, "ana", tier_of(cid))


def test_empty_pool_is_a_clear_error(store):
    with pytest.raises(SelectionError, match="no candidates"):
        build_pool(store, target=4)


def test_nothing_rated_explains_why(store):
    populate(store, 4)
    with pytest.raises(SelectionError, match="4 no live rating"):
        build_pool(store, target=4)


def test_bad_parameters_are_refused(store):
    populate(store, 2)
    for kwargs in (
        {"target": 0},
        {"love_fraction": 1.5},
        {"dup_threshold": 101},  # a similarity distance lies in 0..100
        {"dup_threshold": -1},
        {"max_per_photo": 0},
    ):
        with pytest.raises(SelectionError):
            build_pool(store, **kwargs)


def test_rejects_gate_failures_and_unlicensed_photos_are_left_out(store):
    ids = populate(store, 9)
    bad_photo = add_photo(store, "secret.jpg", licence="All rights reserved")
    unlicensed = add_candidate(store, bad_photo, hue=0.5, seed=77)
    no_author = add_candidate(store, add_photo(store, "anon.jpg", author=""), hue=0.7, seed=78)
    failed = add_candidate(store, 1, hue=0.9, seed=79, accepted=False)
    rate_all(store, ids, lambda c: "reject" if c == ids[0] else ("love" if c % 2 else "okay"))
    for cid in (unlicensed, no_author, failed):
        record_rating(store, cid, "ana", "love")
    draft = build_pool(store, target=100, dup_threshold=0)
    reasons = {e.candidate_id: e.reason for e in draft.excluded}
    assert reasons[ids[0]] == "reject"
    assert reasons[unlicensed] == "licence"
    assert reasons[no_author] == "licence"
    assert reasons[failed] == "gate"
    assert not {ids[0], unlicensed, no_author, failed} & set(draft.candidate_ids)
    assert set(draft.candidate_ids) == set(ids[1:])
    assert any("target 100 not reached" in w for w in draft.warnings)


def test_near_duplicates_are_named_with_their_distance(store):
    photo = add_photo(store, "rose.jpg")
    a = add_candidate(store, photo, hue=0.1, seed=5)
    b = add_candidate(store, photo, generator="other", hue=0.1, seed=5)  # same pixels
    c = add_candidate(store, photo, hue=0.6, seed=11)
    rate_all(store, (a, b, c), lambda cid: "love")
    draft = build_pool(store, target=3, love_fraction=1.0)
    dup = [e for e in draft.excluded if e.reason == "near_duplicate"]
    assert len(dup) == 1 and dup[0].candidate_id == b and dup[0].other_id == a
    assert dup[0].distance == 0 and "distance 0" in dup[0].detail
    assert draft.candidate_ids == [a, c]


def test_caps_and_tier_mix(store):
    ids = populate(store, 24, photos=3, models=("procedural", "glm-x"))
    rate_all(store, ids, lambda c: "love" if c % 4 == 0 else "okay")
    draft = build_pool(
        store, target=8, max_per_photo=3, max_per_model=5, love_fraction=0.5, dup_threshold=0
    )
    entries = load_entries(store, draft.candidate_ids)
    photos = [e.candidate.photo_id for e in entries.values()]
    models = [e.candidate.generator for e in entries.values()]
    assert max(photos.count(p) for p in set(photos)) <= 3
    assert max(models.count(m) for m in set(models)) <= 5
    assert draft.count("love") == 4 and draft.count("okay") == 4
    assert len(draft.candidate_ids) == 8
    reasons = {e.reason for e in draft.excluded}
    assert "tier_mix" in reasons or "photo_cap" in reasons
    assert len(draft.candidate_ids) + len(draft.excluded) == 24


def test_release_diff_and_immutability(store):
    ids = populate(store, 8)
    rate_all(store, ids, lambda c: "love" if c % 2 else "okay")
    draft = build_pool(store, target=6, dup_threshold=0)
    save_draft(store, draft)
    v1 = release(store, notes="first")
    assert v1.version == "1.0.0" and len(v1.candidate_ids) == 6
    with pytest.raises(VersionError, match="already exists"):
        release(store, version="1.0.0")
    with pytest.raises(VersionError, match="not newer"):
        release(store, version="0.9.0")

    # Re-tier one, reject one, then rebuild with a bigger target.
    love_id = next(c for c in v1.candidate_ids if v1.tiers[str(c)] == "love")
    gone_id = next(c for c in v1.candidate_ids if c != love_id)
    record_rating(store, love_id, "ana", "okay")
    record_rating(store, gone_id, "ana", "reject")
    with pytest.raises(VersionError, match="no longer matches"):
        release(store, version="1.1.0", draft=latest_draft(store))
    save_draft(store, build_pool(store, target=8, love_fraction=0.25, dup_threshold=0))
    v2 = release(store, bump="minor")
    assert v2.version == "1.1.0"
    assert [v.version for v in list_versions(store)] == ["1.0.0", "1.1.0"]
    diff = diff_versions(store, "1.0.0", "v1.1.0")
    assert gone_id in diff.removed
    assert (love_id, "love", "okay") in diff.retiered
    assert set(diff.added) == set(v2.candidate_ids) - set(v1.candidate_ids)
    assert get_version(store, "latest").version == "1.1.0"


def test_features_of_an_older_version_without_the_png_leave_it_out_not_crash(store):
    """A store from before the similarity signature: the PNG is gone and only old-version
    features are cached. The candidate is left out as png_missing; the rest still build."""
    from pool.similarity.features import FEATURE_VERSION, load_features

    photo = add_photo(store, "rose.jpg")
    kept = add_candidate(store, photo, hue=0.1, seed=5)
    gone = add_candidate(store, photo, hue=0.6, seed=11)
    rate_all(store, (kept, gone), lambda cid: "love")
    sha = load_entries(store)[gone].candidate.png_sha
    load_features(store, [sha], progress=False)
    with store.transaction() as db:
        db.execute("UPDATE image_features SET version = ?", (FEATURE_VERSION - 1,))
    store.png_path(sha).unlink()
    draft = build_pool(store, target=2, love_fraction=1.0)
    assert draft.candidate_ids == [kept]
    assert [e.reason for e in draft.excluded if e.candidate_id == gone] == ["png_missing"]
