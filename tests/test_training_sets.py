"""A release's training sets: published to the loopback Hub and loaded back with `datasets`
at the tag, one config each (sft, preference, revisions, prompts), beside the default config.

The store is real: the sample photos painted by the procedural coder over two rounds with the
heuristic critic, rendered in the shared browser, so every program and critique chain is one
the pipeline made.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import Image, List, load_dataset
from factories import populate
from loopback_hub import TOKEN, running

from curation.ratings import final_tiers, record_rating
from generators.batch import generate
from pool.catalog import PoolEntry, load_entries
from pool.dataset.export import export_version
from pool.dataset.publish import PublishResult, publish
from pool.dataset.release import release
from pool.dataset.training_sets import ordered_pair
from pool.selection.draft import build_pool, save_draft
from refpool.core.store import candidates
from renderer import static_check

REPO = "ana/watercolour-pool"
FENCED = re.compile(r"\A```js\n(.*)\n```\Z", re.DOTALL)
RANK = {"love": 2, "okay": 1, "reject": 0}
# Loads every config at the tag in a fresh interpreter (datasets reads HF_ENDPOINT at import)
# and prints its rows as JSON, each image as the sha256 of its bytes.
LOADER = """
import hashlib, json, sys, datasets
from datasets import Image, List
out = {}
for name in ("default", "sft", "preference", "revisions", "prompts"):
    ds = datasets.load_dataset(sys.argv[1], name, revision="v1.0.0", split="train")
    for col, feature in ds.features.items():
        if isinstance(feature, Image):
            ds = ds.cast_column(col, Image(decode=False))
        elif isinstance(feature, List) and isinstance(feature.feature, Image):
            ds = ds.cast_column(col, List(Image(decode=False)))
    def sha(v):
        if isinstance(v, dict) and "bytes" in v:
            return hashlib.sha256(v["bytes"] or open(v["path"], "rb").read()).hexdigest()
        if isinstance(v, list):
            return [sha(x) for x in v]
        return v
    out[name] = [{k: sha(v) for k, v in row.items()} for row in ds]
print(json.dumps(out))
"""


@pytest.fixture
def hub(monkeypatch, tmp_path):
    with running(monkeypatch, tmp_path) as fake:
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield fake


@pytest.fixture
def painted(store, photo_id, renderer):
    """Two photos, two chains each over two rounds; rated so that every tier occurs."""
    photos = [r["id"] for r in store.query("SELECT id FROM photos ORDER BY id LIMIT 2")]
    generate(store, photo_ids=photos, candidates=2, rounds=2, renderer=renderer, progress=False)
    rows = store.query("SELECT id, round, parent_id FROM candidates ORDER BY id")
    firsts = [r["id"] for r in rows if r["round"] == 0]
    for r in rows:
        tier = "love" if r["round"] == 1 else ("okay" if firsts.index(r["id"]) % 2 else "reject")
        record_rating(store, r["id"], "ana", tier)
    return photos


def load_configs(hub, tmp_path) -> dict[str, list[dict]]:
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf-home")}
    out = subprocess.run(
        [sys.executable, "-c", LOADER, REPO], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_each_training_set_loads_at_the_tag_and_says_what_the_store_says(
    store, painted, hub, renderer, tmp_path
):
    save_draft(store, build_pool(store, target=20, dup_threshold=0))
    pv = release(store, version="1.0.0", repo_id=REPO, with_diversity=False)
    assert isinstance(publish(store, REPO, pv.version, progress=False), PublishResult)
    loaded = load_configs(hub, tmp_path)
    files = hub.repos[REPO].files
    released = {r["source_file"]: r for r in loaded["default"]}
    tiers = final_tiers(store)

    # sft: each completion is, byte for byte, the program of the image beside it, and it
    # passes the gate again: the static pass for all, a real render for the first two.
    assert loaded["sft"] and all(r["tier"] == "love" for r in loaded["sft"])
    for row in loaded["sft"]:
        program = FENCED.match(row["completion"][0]["content"])[1]
        assert program.encode("utf-8") == files[row["source_file"]]
        assert row["painting"] == released[row["source_file"]]["image"]
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert static_check(program) == []
    for row in loaded["sft"][:2]:
        assert renderer.render(FENCED.match(row["completion"][0]["content"])[1]).accepted

    # preference: one photo per pair, the higher tier chosen, the programs as stored.
    assert loaded["preference"]
    for row in loaded["preference"]:
        better = candidates.get(store, row["chosen_candidate_id"])
        worse = candidates.get(store, row["rejected_candidate_id"])
        assert better.photo_id == worse.photo_id
        assert RANK[tiers[better.id]] > RANK[tiers[worse.id]]
        assert (row["chosen_tier"], row["rejected_tier"]) == (tiers[better.id], tiers[worse.id])
        for side, c in (("chosen", better), ("rejected", worse)):
            program = FENCED.match(row[side][0]["content"])[1]
            assert program == store.program_source(c.program_sha)
    assert {r["rejected_tier"] for r in loaded["preference"]} >= {"okay", "reject"}
    rejected = {cid for cid, t in tiers.items() if t == "reject"}
    assert rejected and not any(f"_{cid:06d}." in p for p in files for cid in rejected)

    # revisions: system, then user and assistant in turn, ending with the released program.
    assert loaded["revisions"]
    for row in loaded["revisions"]:
        roles = [m["role"] for m in row["messages"]]
        assert roles[0] == "system" and roles[-1] == "assistant"
        assert roles[1:] == ["user", "assistant"] * ((len(roles) - 1) // 2)
        assert len(row["candidate_ids"]) == roles.count("assistant") >= 2
        last = FENCED.match(row["messages"][-1]["content"])[1]
        assert last.encode("utf-8") == files[row["source_file"]]
        assert row["candidate_ids"][-1] == released[row["source_file"]]["candidate_id"]
        assert row["painting"] == released[row["source_file"]]["image"]

    # prompts: one per photo of the release, each with its references.
    photos = {r["reference_photo"] for r in loaded["default"]}
    assert sorted(r["reference_photo"] for r in loaded["prompts"]) == sorted(photos)
    assert all(r["references"] for r in loaded["prompts"])

    card = files["README.md"].decode()
    assert "## Training sets" in card and "refpool's coder system prompt" in card
    assert f'load_dataset("{REPO}", "sft", revision="v1.0.0"' in card


def test_another_system_prompt_is_used_and_named(store, tmp_path):
    from pool.dataset.training_prompts import options_from_file
    from refpool.core.store import releases

    for cid in populate(store, 8):
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    prompt = tmp_path / "env_system.md"
    prompt.write_text("You paint watercolours in p5.brush.\n")
    save_draft(store, build_pool(store, target=20, dup_threshold=0))
    pv = release(
        store,
        version="1.0.0",
        with_diversity=False,
        training=options_from_file(prompt, sft_okay=True, photos=True),
    )
    by_path = {f.path: f for f in releases.files(store, pv.version)}
    read = lambda p: store.blob_path(by_path[p].kind, by_path[p].sha256).read_text()  # noqa: E731
    sft = [json.loads(x) for x in read("sft.jsonl").splitlines()]
    system = {"type": "text", "text": "You paint watercolours in p5.brush."}
    assert all(r["prompt"][0]["content"] == [system] for r in sft)
    assert {r["tier"] for r in sft} == {"love", "okay"}
    assert "env_system.md (sha256 " in read("README.md")

    # The photos ship in photos/ (never in images/) and load as the `images` of sft and prompts.
    export_version(store, tmp_path / "out", pv.version, progress=False)
    photos = {p.name: p.read_bytes() for p in (tmp_path / "out" / "photos").iterdir()}
    assert len(photos) == 3 and not any(n in photos for n in os.listdir(tmp_path / "out/images"))
    for name in ("sft", "prompts"):
        ds = load_dataset(str(tmp_path / "out"), name, split="train", cache_dir=tmp_path / "c")
        ds = ds.cast_column("images", List(Image(decode=False)))
        for row in ds:
            assert row["prompt"][1]["content"][0]["type"] == "image"
            assert [p["bytes"] or Path(p["path"]).read_bytes() for p in row["images"]] == [
                photos[next(n for n in photos if n.endswith("_" + row["reference_photo"]))]
            ]


def test_ties_and_disagreements_make_no_pair(store):
    love_id, okay_id = populate(store, 2, photos=1)
    record_rating(store, love_id, "ana", "love")
    record_rating(store, okay_id, "ana", "okay")
    entries = load_entries(store)
    love, okay = entries[love_id], entries[okay_id]
    assert ordered_pair(love, okay) and not ordered_pair(okay, love)
    assert not ordered_pair(love, love)  # a tie
    split = PoolEntry(okay.candidate, okay.photo, "okay", {**okay.votes, "cy": "love"})
    rival = PoolEntry(love.candidate, love.photo, "love", {**love.votes, "cy": "okay"})
    assert not ordered_pair(rival, split)  # cy put them the other way round


def test_judge_resolved_pairs_only_break_the_curators_ties_and_are_labelled(store):
    from pool.dataset.training_judged import judged_pairs
    from refpool.core.store.calibration import JudgedPair, save_pair

    a, b, c, d, e = populate(store, 5, photos=1)
    for cid, tier in ((a, "love"), (b, "love"), (c, "okay"), (d, "reject")):
        record_rating(store, cid, "ana", tier)  # e stays unrated
    entries = load_entries(store)
    png = {cid: entries[cid].candidate.png_sha for cid in entries}

    def verdict(judge: str, x: int, y: int, score: float) -> None:
        save_pair(store, JudgedPair(judge, png[x], png[y], "A", "B", score))

    verdict("j1", a, b, 1.0)  # a tie between two loves: the judge resolves it
    verdict("j1", c, a, 1.0)  # the curators put a over c already: not the judge's to decide
    verdict("j1", e, d, 1.0)  # d was rejected: never a judge pair
    verdict("j1", c, e, 0.5)  # the two orders disagreed: unresolved
    verdict("j1", e, c, 0.0)  # c over an unrated program
    photo = next(iter(entries.values())).photo
    args = ({photo.id: photo}, {photo.id: [{"role": "user", "content": "p"}]}, {photo.id: ["x"]})
    pairs = judged_pairs(store, entries, *args)
    assert [(p["chosen_candidate_id"], p["rejected_candidate_id"]) for p in pairs] == [
        (a, b),
        (c, e),
    ]
    assert {p["label_source"] for p in pairs} == {"judge:j1"}
    assert pairs[1]["rejected_tier"] == "unrated"

    verdict("j2", b, a, 1.0)  # a second judge sees the tie the other way: left out
    pairs = judged_pairs(store, entries, *args)
    assert [(p["chosen_candidate_id"], p["rejected_candidate_id"]) for p in pairs] == [(c, e)]
