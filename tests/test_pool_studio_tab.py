"""The studio's Pool tab without a browser: draft building, left-out reasons, report, blind mode."""

from __future__ import annotations

from html import unescape
from html.parser import HTMLParser

import pytest
from factories import add_candidate, add_photo, populate

from curation.ratings import record_rating
from curation.service import Services, Settings
from pool.diversity.analysis import analyse
from pool.selection.draft import latest_draft
from refpool.core.store import candidates
from studio import pool_tab as pool_view


def rate_all(store, ids, pattern=("love", "okay", "reject"), curator="alice"):
    for i, cid in enumerate(ids):
        record_rating(store, cid, curator, pattern[i % len(pattern)])


def drafts(store) -> int:
    return store.query("SELECT COUNT(*) AS n FROM pool_drafts")[0]["n"]


class Frames(HTMLParser):
    """Collects the srcdoc of every iframe, as the browser would decode it."""

    def __init__(self):
        super().__init__()
        self.srcdocs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "iframe":
            self.srcdocs.append(dict(attrs)["srcdoc"])
            assert dict(attrs).get("sandbox") == ""


def test_empty_store_and_nothing_rated_give_a_message_not_a_draft(store):
    services = Services(store, Settings())
    v = pool_view.build_draft(services, 178)
    assert v.draft_id is None and v.level == "warn" and "no candidates yet" in v.message
    ids = populate(store, 4)
    v = pool_view.build_draft(services, 178)
    assert v.draft_id is None and "no live rating yet" in v.message
    record_rating(store, ids[0], "alice", "reject")
    v = pool_view.build_draft(services, 178)
    assert v.draft_id is None and "rated reject" in v.message
    assert drafts(store) == 0
    assert "Build a draft" in pool_view.pool_report_html(v) and v.message in pool_view.pool_html(v)


@pytest.mark.parametrize(
    "args, wrong",
    [
        ((0, 0.5, None, None), "Target size"),
        (("", 0.5, None, None), "Target size"),
        ((10.5, 0.5, None, None), "Target size"),
        ((10, 1.5, None, None), "Love fraction"),
        ((10, "lots", None, None), "Love fraction"),
        ((10, float("nan"), None, None), "Love fraction"),
        ((10, 0.5, -1, None), "Max per photo"),
        ((10, 0.5, 1.5, None), "Max per photo"),
        ((10, 0.5, None, -2), "Max per model"),
    ],
)
def test_bad_inputs_say_which_field_is_wrong(store, args, wrong):
    rate_all(store, populate(store, 3))
    v = pool_view.build_draft(Services(store, Settings()), *args)
    assert v.level == "error" and v.message.startswith(wrong) and v.draft_id is None
    assert drafts(store) == 0


def test_draft_counts_left_out_and_report_match_the_pool_package(store):
    ids = populate(store, 12)
    rate_all(store, ids)  # 4 love, 4 okay, 4 reject
    v = pool_view.build_draft(Services(store, Settings()), 178, 0.5, None, None)
    saved = latest_draft(store)  # saved, as `refpool pool build` does
    assert v.draft_id == 1 and saved is not None
    assert (v.total, v.love, v.okay) == (
        len(saved.candidate_ids),
        saved.count("love"),
        saved.count("okay"),
    )
    assert v.total == 8 and sum(v.per_photo.values()) == 8 and sum(v.per_model.values()) == 8
    assert set(v.per_model) == {"procedural", "glm-x"}
    # a target larger than what is available is reported, not hidden
    assert v.level == "warn" and any("target 178 not reached" in w for w in v.warnings)
    groups = {g.reason: g for g in v.left_out}
    assert {r: g.count for r, g in groups.items()} == {
        r: len(e) for r, e in saved.reasons().items()
    }
    assert groups["reject"].count == 4 and groups["reject"].examples[0][1] == "rejected by alice"

    r = v.report
    assert r.html_path == store.home / "reports" / "draft-1.html" and r.html_path.exists()
    assert r.url == "reports/draft-1.html"  # by draft id: the page shows no server path
    metrics = analyse(store, saved.tiers).metrics
    head = dict(r.headline)
    assert head["Vendi (hash)"] == metrics.vendi.hash and head["n"] == 8
    assert head["near-duplicate clusters"] == metrics.near_duplicates.n_clusters

    page = pool_view.pool_report_html(v)
    frames = Frames()
    frames.feed(page)
    assert frames.srcdocs == [r.html_path.read_text("utf-8")]  # escaped once, decoded intact
    assert f">{metrics.vendi.hash:g}<" in page and 'download="draft-1.html"' in page

    html = pool_view.pool_html(v)
    assert 'id="rp-pool-total">8<' in html and 'id="rp-pool-love">4<' in html
    assert f'data-rp-goto="{groups["reject"].examples[0][0]}"' in html


def test_caps_and_a_second_build_make_a_new_draft(store):
    ids = populate(store, 12)
    rate_all(store, ids, ("love", "okay"))
    services = Services(store, Settings())
    first = pool_view.build_draft(services, 6, 0.5, 0, "")  # 0 or empty: no cap
    assert first.total == 6 and {g.reason for g in first.left_out} == {"tier_mix"}
    v = pool_view.build_draft(services, 6, 0.5, 1, None)
    assert v.draft_id == 2 and v.total == 3  # three photos, one each
    assert set(v.per_photo.values()) == {1}
    assert {g.reason for g in v.left_out} == {"photo_cap"}
    assert v.left_out[0].count == 9 and len(v.left_out[0].examples) == 5
    assert "… 4 more" in pool_view.pool_html(v)


def test_blind_studio_builds_no_draft(store):
    """A draft is every curator's ratings combined: a blind curator may not see its counts."""
    ids = populate(store, 12, models=("secret-coder-9", "hidden-llm"))
    rate_all(store, ids, curator="alice")
    v = pool_view.build_draft(Services(store, Settings(blind=True)), 20, 0.5, None, 1)
    assert v.draft_id is None and v.level == "warn" and "not built in blind mode" in v.message
    assert drafts(store) == 0 and not list((store.home / "reports").glob("*.html"))
    shown = pool_view.pool_html(v) + pool_view.pool_report_html(v)
    for leak in ("secret-coder-9", "hidden-llm", "alice", "love", "okay"):
        assert leak not in shown


def test_left_out_reasons_keep_their_whole_detail_for_an_open_studio(store):
    """A blind studio builds no draft (above), so nothing is masked: an open one shows all."""
    ids = populate(store, 4, models=("secret-coder-9", "hidden-llm"))
    failed = add_candidate(store, 1, "secret-coder-9", hue=0.9, seed=79, accepted=False)
    candidates.save(store, {"infra_error": "secret-coder-9 endpoint timed out"}, existing=failed)
    rate_all(store, [*ids, failed], ("love", "okay"))
    seen = pool_view.build_draft(Services(store, Settings()), 20, max_per_model=1)
    gate = next(g for g in seen.left_out if g.reason == "gate")
    assert [cid for cid, _ in gate.examples] == [failed]
    assert "infra: secret-coder-9 endpoint timed out" in unescape(pool_view.pool_html(seen))


def test_names_from_the_store_are_escaped(store):
    photo = add_photo(store, "<img src=x onerror=alert(1)>.jpg")
    ids = [
        add_candidate(store, photo, "<b>evil</b>", hue=h, seed=i) for i, h in enumerate((0, 0.5))
    ]
    rate_all(store, ids, ("love", "okay"))
    v = pool_view.build_draft(Services(store, Settings()), 2)
    html = pool_view.pool_html(v) + pool_view.pool_report_html(v)
    assert "<img src=x" not in html and "<b>evil" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;.jpg" in html and "&lt;b&gt;evil" in html
