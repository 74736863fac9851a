"""The rung tier end to end: calibration's rung band -> `pool build --mix` -> release ->
export (rung_<id>.png and its source) -> the env-style sampler; and stored preference scores
reaching the release's rows and card."""

from __future__ import annotations

import json

import pytest
from factories import populate

from curation.ratings import record_rating
from pool.cli import parse_mix
from pool.dataset.export import export_version
from pool.dataset.release import release
from pool.dataset.sampler import sample_references
from pool.selection.draft import SelectionError, build_pool, save_draft
from refpool.core.store.calibration import (
    LadderEntry,
    PreferenceRow,
    save_ladder_entry,
    save_preference,
)


def _ladder(store, cid: int, win_rate: float, cls: str) -> None:
    save_ladder_entry(
        store,
        LadderEntry(cid, "heuristic", True, win_rate, 4, 1, cls, judge_key="heuristic"),
    )


@pytest.fixture
def calibrated(store):
    """12 candidates: 8 rated (love/okay alternating), 4 unrated; 3 unrated + 1 rated okay
    in the rung band, one rung-band candidate rejected by a curator."""
    ids = populate(store, 12)
    rated, unrated = ids[:8], ids[8:]
    for cid in rated:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    okay_rung = next(c for c in rated if c % 2 == 0)
    rejected = unrated[-1]
    record_rating(store, rejected, "ana", "reject")
    for cid in (*unrated, okay_rung):
        _ladder(store, cid, 0.5, "rung")
    _ladder(store, rated[0], 0.9, "free_win")
    return {"ids": ids, "rungs": {*unrated[:3], okay_rung}, "rejected": rejected}


def test_rung_band_enters_the_pool_only_when_asked(store, calibrated):
    without = build_pool(store, target=12, dup_threshold=0)
    assert without.count("rung") == 0
    assert calibrated["rungs"] & set(without.candidate_ids) == {
        c for c in calibrated["rungs"] if c in without.tiers
    }
    with_rungs = build_pool(store, target=12, dup_threshold=0, love_fraction=0.4, rung_fraction=0.3)
    chosen_rungs = {c for c, t in with_rungs.tiers.items() if t == "rung"}
    assert chosen_rungs == calibrated["rungs"]  # rated okay or unrated, the band decides
    assert calibrated["rejected"] not in with_rungs.candidate_ids  # a reject still vetoes
    assert "rung 4" in with_rungs.summary()


def test_a_rung_release_exports_rung_files_the_sampler_draws(store, calibrated, tmp_path):
    draft = build_pool(store, target=12, dup_threshold=0, love_fraction=0.4, rung_fraction=0.3)
    save_draft(store, draft)
    pv = release(store, notes="with rungs")
    out = tmp_path / "release"
    export_version(store, out, pv, progress=False, with_diversity=False)
    rung_pngs = sorted(p.name for p in (out / "images").glob("rung_*.png"))
    assert len(rung_pngs) == 4
    for name in rung_pngs:
        assert (out / "sources" / name.replace(".png", ".js")).read_text().strip()
    rows = [json.loads(line) for line in (out / "metadata.jsonl").open()]
    assert {r["tier"] for r in rows} == {"love", "okay", "rung"}
    card = (out / "README.md").read_text()
    assert "**4 rung**" in card and "## As a reward signal" in card
    assert "| ceiling | rung | free win |" in card and "heuristic" in card
    drawn = sample_references(out, pv.version, k=4, love=2, rung=1, seed=3)
    assert sorted(r.tier for r in drawn) == ["love", "love", "okay", "rung"]


def test_stored_preference_scores_fill_the_release_and_the_card_says_whose(store, tmp_path):
    ids = populate(store, 6)
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    save_draft(store, build_pool(store, target=6, dup_threshold=0))
    save_preference(store, PreferenceRow(ids[0], "hpsv3-http", "sha", "a watercolour", 7.25, 0.5))
    pv = release(store)  # scored before the release: the scores are frozen with it
    out = tmp_path / "release"
    export_version(store, out, pv, progress=False, with_diversity=False)
    rows = {r["candidate_id"]: r for r in map(json.loads, (out / "metadata.jsonl").open())}
    assert (rows[ids[0]]["hpsv3_mu"], rows[ids[0]]["hpsv3_sigma"]) == (7.25, 0.5)
    assert all(r["hpsv3_mu"] is None for c, r in rows.items() if c != ids[0])
    card = (out / "README.md").read_text()
    assert "preference score from `hpsv3-http`" in card
    assert "Not calibrated" in card  # no ladder yet, and the card says so


def test_mix_is_parsed_and_checked():
    assert parse_mix("love=0.5,okay=0.3,rung=0.2", 0.5) == (0.5, 0.2)
    assert parse_mix("love=0.5,rung=0", 0.5) == (0.5, 0.0)
    assert parse_mix(None, 0.4) == (0.4, 0.0)
    for bad in ("love=0.7,okay=0.7", "gold=1", "love=half"):
        with pytest.raises(SelectionError):
            parse_mix(bad, 0.5)


def test_the_report_shows_the_ladder_and_an_unchecked_judge(store, calibrated, tmp_path):
    from pool.diversity.report import write_report

    tiers = dict.fromkeys(calibrated["ids"], "unrated")
    result = write_report(store, tmp_path / "r.html", tiers, "all", progress=False)
    reward = result.payload["reward"]
    assert reward["ladder"]["counts"] == {"ceiling": 0, "rung": 5, "free_win": 1, "unresolved": 0}
    assert reward["ladder"]["heuristic"] is True
    assert "unchecked" in reward["agreement"]["warning"]
    html = result.html_path.read_text()
    assert "As a reward signal" in html and "Warning: judge" in html
    assert "hpsv3_mu is null" in html
