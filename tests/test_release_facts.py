"""Every fact a release publishes is true (issue 33, items 4 and 5): the rows name the model
the endpoint was asked for and the one it served, beside the models-file name; curators can be
published as stable pseudonyms; the card's judge, ladder and agreement are those of the
release's own rows, naming every judge and warning when they are mixed or unmeasured."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from factories import add_candidate, add_photo

from curation.ratings import record_rating
from pool.dataset.export import export_version
from pool.dataset.release import release
from pool.selection.draft import build_pool, save_draft
from refpool.core.contracts import ModelCall
from refpool.core.store import Store, candidates, model_calls, releases
from refpool.core.store.calibration import JudgedPair, LadderEntry, save_ladder_entry, save_pair

ROOT = Path(__file__).resolve().parent.parent
ENDPOINT_MODEL = "org/coder-a-7b-instruct"
SERVED = "org/coder-a-7b-instruct:fallback"
PSEUDONYM = re.compile(r"^curator-[0-9a-f]{8}$")


def coder_candidate(store: Store, photo: int, hue: float) -> int:
    """A candidate written by the models-file entry `coder-a`, whose call asked the endpoint
    for ENDPOINT_MODEL and was told SERVED."""
    call = model_calls.save(
        store,
        ModelCall(
            ENDPOINT_MODEL, "http://127.0.0.1:9/v1", "coder", [], {}, "ok", served_model=SERVED
        ),
    )
    cid = add_candidate(store, photo, "coder-a", hue=hue, seed=int(hue * 100))
    candidates.save(store, {"coder_call_id": call}, existing=cid)
    return cid


def rated_library(store: Store) -> tuple[list[int], list[int]]:
    """Four coder-a and four procedural paintings, rated by two named curators."""
    photo = add_photo(store, "heron.jpg")
    coder = [coder_candidate(store, photo, 0.1 + i * 0.2) for i in range(4)]
    procedural = [add_candidate(store, photo, hue=0.2 + i * 0.2, seed=50 + i) for i in range(4)]
    for i, cid in enumerate(coder + procedural):
        record_rating(store, cid, "Ana Lima", "love" if i % 2 else "okay")
        record_rating(store, cid, "bo.k", "love" if i % 2 else "okay")
    return coder, procedural


def load_with_datasets(folder: Path) -> list[dict]:
    """The exported release as `datasets` loads it (a fresh, offline interpreter)."""
    code = (
        "import json, sys, datasets\n"
        "ds = datasets.load_dataset(sys.argv[1], split='train').remove_columns(['image'])\n"
        "print(json.dumps(ds.to_list()))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env["HF_HOME"] = str(folder.parent / "hf-home")
    out = subprocess.run(
        [sys.executable, "-c", code, str(folder)], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_rows_name_the_endpoint_model_the_served_model_and_the_models_file_name(store, tmp_path):
    coder, procedural = rated_library(store)
    save_draft(store, build_pool(store, target=8, love_fraction=0.5, dup_threshold=0))
    pv = release(store, with_diversity=False, pseudonymise_curators=True)
    export_version(store, tmp_path / "v1", pv.version, progress=False)

    rows = {r["candidate_id"]: r for r in load_with_datasets(tmp_path / "v1")}
    assert set(rows) == set(coder + procedural)
    for cid in coder:
        assert rows[cid]["generator_model"] == ENDPOINT_MODEL
        assert rows[cid]["served_model"] == SERVED
        assert rows[cid]["generator_name"] == "coder-a"
    for cid in procedural:
        assert rows[cid]["generator_model"] == rows[cid]["generator_name"] == "procedural"
        assert rows[cid]["served_model"] is None
    card = (tmp_path / "v1" / "README.md").read_text()
    assert f"{ENDPOINT_MODEL} (coder-a) | 4 |" in card


def test_pseudonymised_curators_are_stable_across_versions_and_never_named(store, tmp_path):
    coder, procedural = rated_library(store)
    save_draft(store, build_pool(store, target=8, love_fraction=0.5, dup_threshold=0))
    v1 = release(store, with_diversity=False, pseudonymise_curators=True)
    export_version(store, tmp_path / "v1", v1.version, progress=False)
    published = [
        p.read_text("utf-8")
        for p in (tmp_path / "v1").rglob("*")
        if p.suffix in {".md", ".json", ".jsonl"}
    ]
    assert published and not any("Ana Lima" in t or "bo.k" in t for t in published)
    first = {r["candidate_id"]: r["curator_ratings"] for r in load_with_datasets(tmp_path / "v1")}
    names = {v["curator"] for votes in first.values() for v in votes}
    assert len(names) == 2 and all(PSEUDONYM.match(n) for n in names)

    # A later version, after a re-rating: each curator keeps their pseudonym.
    record_rating(store, procedural[0], "Ana Lima", "reject")
    save_draft(store, build_pool(store, target=8, love_fraction=0.5, dup_threshold=0))
    v2 = release(store, with_diversity=False, pseudonymise_curators=True)
    second = {r.candidate_id: r.curator_ratings for r in releases.rows(store, v2.version)}
    assert {v["curator"] for votes in second.values() for v in votes} == names
    assert second[coder[0]] == first[coder[0]]
    # Without the flag the names are published as they are.
    record_rating(store, procedural[1], "bo.k", "reject")
    save_draft(store, build_pool(store, target=8, love_fraction=0.5, dup_threshold=0))
    v3 = release(store, with_diversity=False)
    plain = {v["curator"] for r in releases.rows(store, v3.version) for v in r.curator_ratings}
    assert plain == {"Ana Lima", "bo.k"}


def judged(store: Store, key: str, love: int, okay: int, score: float) -> None:
    found = candidates.get_many(store, [love, okay])
    x, y = found[love].png_sha or "", found[okay].png_sha or ""
    save_pair(store, JudgedPair(key, x, y, "A", "B", score))


def test_the_card_names_every_judge_of_its_ladder_and_warns_when_they_are_mixed(store):
    photo = add_photo(store, "heron.jpg")
    ids = [add_candidate(store, photo, hue=i * 0.15, seed=i) for i in range(6)]
    for i, cid in enumerate(ids):
        record_rating(store, cid, "ana", "love" if i < 3 else "okay")
    for cid in ids[:4]:
        save_ladder_entry(
            store, LadderEntry(cid, "fake/judge-vl", False, 0.5, 6, 0, "rung", judge_key="vl#1")
        )
    for cid in ids[4:]:
        save_ladder_entry(
            store, LadderEntry(cid, "heuristic", True, 0.1, 6, 0, "ceiling", judge_key="heur#1")
        )
    save_draft(store, build_pool(store, target=6, love_fraction=0.5, dup_threshold=0))
    pv = release(store, with_diversity=False)
    card = card_of(store, pv.version)
    assert "fake/judge-vl for 4 of them" in card
    assert "heuristic (offline measurements, not a model) for 2 of them" in card
    assert "the ladder mixes 2 judges" in card and "`refpool pool calibrate`" in card


def card_of(store: Store, version: str) -> str:
    readme = next(f for f in releases.files(store, version) if f.path == "README.md")
    return store.blob_path(readme.kind, readme.sha256).read_text("utf-8")


def test_agreement_on_the_card_is_measured_on_the_release_pairs_not_on_pairs_drawn_before(store):
    photo = add_photo(store, "heron.jpg")
    ids = [add_candidate(store, photo, hue=i * 0.15, seed=i) for i in range(6)]
    love, okay = ids[:3], ids[3:]
    for cid in love:
        record_rating(store, cid, "ana", "love")
    for cid in okay:
        record_rating(store, cid, "ana", "okay")
    for cid in ids:
        save_ladder_entry(
            store, LadderEntry(cid, "fake/judge-vl", False, 0.5, 6, 0, "rung", judge_key="vl#1")
        )
    # judge-agreement ran on the pairs of the day; then ana re-rated: the release's pairs are new.
    judged(store, "vl#1", love[0], okay[0], 1.0)
    record_rating(store, love[0], "ana", "okay")
    record_rating(store, okay[1], "ana", "love")
    save_draft(store, build_pool(store, target=6, love_fraction=0.5, dup_threshold=0))
    v1 = release(store, with_diversity=False)
    card = card_of(store, v1.version)
    assert "Judges that placed this release's references: fake/judge-vl for 6 of them" in card
    assert "judge fake/judge-vl is unchecked on this release: none of its 9 love/okay pairs" in card
    assert "`refpool pool judge-agreement --pool --pairs 9` before `refpool pool release`" in card

    # Measured on some of the release's pairs: the figure, and which share it covers.
    now_love = [love[1], love[2], okay[1]]
    now_okay = [love[0], okay[0], okay[2]]
    for lv in now_love[:2]:
        for ok in now_okay:
            judged(store, "vl#1", lv, ok, 1.0)
    record_rating(store, ids[0], "bo", "okay")  # a change, so the next release is not identical
    save_draft(store, build_pool(store, target=6, love_fraction=0.5, dup_threshold=0))
    v2 = release(store, with_diversity=False)
    card = card_of(store, v2.version)
    assert (
        "prefers a curator's love over their okay in 100% of 6 resolved pairs of this release"
        in card
    )
    assert "agreement was measured on 6 of this release's 9 love/okay pairs" in card
    assert "mixes" not in card


def test_judge_agreement_pool_asks_only_about_the_draft_pairs(store):
    """`pool judge-agreement --pool`: the pairs the next release's card counts, no others."""
    from pool.reward.judge_agreement import love_okay_pairs

    photo = add_photo(store, "heron.jpg")
    ids = [add_candidate(store, photo, hue=i * 0.15, seed=i) for i in range(6)]
    for i, cid in enumerate(ids):
        record_rating(store, cid, "ana", "love" if i < 3 else "okay")
    everything, _ = love_okay_pairs(store, max_pairs=100)
    drafted, curators = love_okay_pairs(store, max_pairs=100, among={ids[0], ids[3], ids[4]})
    assert len(everything) == 9 and curators == 1
    assert drafted == [(ids[0], ids[3]), (ids[0], ids[4])]
