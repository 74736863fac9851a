"""The diversity report: near-duplicate clusters over all candidates, shares, tier tables,
and an explanation beside every headline number."""

from __future__ import annotations

import json

import pytest
from factories import add_candidate, add_photo

from pool.diversity.analysis import HEADLINE, HEADLINE_NOTES
from pool.diversity.report import write_report


@pytest.fixture
def stocked(store):
    """Two photos, two models; candidate `twin` repaints `kept` pixel for pixel."""
    rose, daisy = add_photo(store, "rose.jpg"), add_photo(store, "daisy.jpg", url="https://e.org/2")
    kept = add_candidate(store, rose, "procedural", round_=0, hue=0.95, seed=3)
    twin = add_candidate(store, rose, "procedural", round_=1, hue=0.95, seed=3)  # same pixels
    others = [
        add_candidate(store, rose, "glm-x", hue=0.15, seed=11),
        add_candidate(store, daisy, "procedural", hue=0.55, seed=12),
        add_candidate(store, daisy, "glm-x", hue=0.75, seed=13),
    ]
    tiers = {kept: "love", others[0]: "love", others[1]: "okay", others[2]: "okay"}
    return store, tiers, kept, twin


def test_clusters_cover_all_candidates_not_only_the_pool(stocked, tmp_path):
    store, tiers, kept, twin = stocked
    result = write_report(store, tmp_path / "r.html", tiers, "draft", progress=False)
    mt = result.payload
    # the selection holds one of the twins, so it has no cluster of its own...
    assert mt["near_duplicates"]["n_clusters"] == 0
    # ...but over all candidates the twins are one cluster, and the kept one is marked
    every = mt["all_candidates"]
    assert every["n_candidates"] == 5
    assert every["clusters"] == [[kept, twin]]
    assert every["in_pool"] == [[kept]]
    assert every["share_of_candidates"] == pytest.approx(2 / 5)
    html = (tmp_path / "r.html").read_text()
    assert "among all candidates (1)" in html
    assert html.count("in pool") >= 1 and f"#{twin} " in html  # the left-out twin is shown


def test_shares_and_tier_tables(stocked, tmp_path):
    store, tiers, *_ = stocked
    result = write_report(
        store, tmp_path / "r.html", tiers, "draft", json_out=tmp_path / "m.json", progress=False
    )
    mt = json.loads((tmp_path / "m.json").read_text())
    assert mt == json.loads(json.dumps(result.payload))
    assert mt["shares"]["tier"] == {"love": 0.5, "okay": 0.5}
    assert mt["shares"]["model"] == {"glm-x": 0.5, "procedural": 0.5}
    assert mt["shares"]["photo"] == {"daisy.jpg": 0.5, "rose.jpg": 0.5}
    assert mt["tier_by"]["photo"] == {
        "daisy.jpg": {"love": 0, "okay": 2},
        "rose.jpg": {"love": 2, "okay": 0},
    }
    assert mt["tier_by"]["model"] == {
        "glm-x": {"love": 1, "okay": 1},
        "procedural": {"love": 1, "okay": 1},
    }
    html = (tmp_path / "r.html").read_text()
    assert "tier × photo" in html and "tier × model" in html
    assert "2 (50%)" in html  # bars carry shares beside counts


def test_every_headline_metric_is_explained_where_it_appears(stocked, tmp_path):
    store, tiers, *_ = stocked
    write_report(store, tmp_path / "r.html", tiers, "draft", progress=False, all_candidates=False)
    html = (tmp_path / "r.html").read_text()
    assert {name for name, _ in HEADLINE} == set(HEADLINE_NOTES)
    assert "what it means" in html
    for name, _ in HEADLINE:
        assert HEADLINE_NOTES[name].replace("`", "&#x60;")[:40] in html.replace("`", "&#x60;")
