"""Publishing through the real huggingface_hub client against the loopback Hub (HF_ENDPOINT).

The hub (tests/loopback_hub.py) answers the routes HfApi calls (create_repo, list_repo_refs,
list_repo_files, create_commit with preupload, the LFS batch API and the NDJSON commit,
create_tag) and the ones snapshot_download calls, with the payloads those methods parse.
"""

from __future__ import annotations

import json
import logging

import pytest
from factories import populate
from loopback_hub import TOKEN, running

from curation.ratings import record_rating
from pool.dataset.publish import PublishError, PublishPlan, PublishResult, publish
from pool.dataset.release import release
from pool.selection.draft import build_pool, save_draft


@pytest.fixture
def hub(monkeypatch, tmp_path):
    with running(monkeypatch, tmp_path) as fake:
        yield fake


def released(store, n=8, version=None, repo_id=None):
    ids = populate(store, n)
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    save_draft(store, build_pool(store, target=n, dup_threshold=0))
    return release(store, version=version, repo_id=repo_id)


def test_without_a_token_it_refuses_before_any_request(store, hub):
    released(store)
    with pytest.raises(PublishError, match="no Hugging Face token found: set HF_TOKEN"):
        publish(store, "ana/pool", progress=False)
    assert hub.requests == []


def test_dry_run_shows_the_release_layout_and_needs_no_network(store, hub):
    pv = released(store)
    plan = publish(store, "ana/pool", dry_run=True, progress=False)
    assert isinstance(plan, PublishPlan) and not plan.has_token
    paths = [p for p, _ in plan.files]
    stems = sorted(f"{t}_{int(c):06d}" for c, t in pv.tiers.items())
    assert paths == sorted(
        ["README.md", "metadata.jsonl", "photo_attribution.json"]
        + ["preference.jsonl", "prompts.jsonl", "sft.jsonl"]  # training sets (no chains)
        + [f"images/{s}.png" for s in stems]
        + [f"sources/{s}.js" for s in stems]
    )
    assert all(size > 0 for _, size in plan.files)
    text = plan.summary()
    assert "v1.0.0" in text and "a real publish would refuse" in text
    assert "images/  (8 files: images/" in text and "metadata.jsonl" in text
    assert "images/love_" in plan.summary(verbose=True)
    assert hub.requests == []


def test_bad_repo_id_is_refused(store, hub):
    released(store)
    with pytest.raises(PublishError, match="OWNER/NAME"):
        publish(store, "not a repo", token=TOKEN, progress=False)


def test_publish_commits_once_tags_and_the_card_names_the_repo(
    store, hub, monkeypatch, tmp_path, caplog
):
    caplog.set_level(logging.DEBUG)
    pv = released(store, repo_id="ana/pool")  # the card, frozen at release, names the repo
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    result = publish(store, "ana/pool", private=True, progress=False)
    repo = hub.repos["ana/pool"]
    assert repo.private is True
    assert repo.messages[1:] == ["Release refpool pool v1.0.0 (8 images)"]  # one commit
    assert repo.tags == {"v1.0.0": result.commit_oid} and repo.head == result.commit_oid
    files = repo.files
    assert {".gitattributes", "README.md", "metadata.jsonl", "photo_attribution.json"} <= set(files)
    assert sum(p.startswith("images/") for p in files) == 8
    snapshot = repo.commits[repo.head]
    assert all(snapshot[p].lfs for p in files if p.endswith(".png"))  # PNGs went through LFS
    assert not snapshot["metadata.jsonl"].lfs
    card = files["README.md"].decode()
    assert 'snapshot_download("ana/pool"' in card and 'load_dataset("ana/pool"' in card
    assert "OWNER/NAME" not in card
    # Every repo call is authenticated; the LFS PUTs go to the storage URL the batch API gave
    # (the client's own public registry look-up, /api/agent-harnesses, carries no token).
    unauthenticated = {p.split("/")[1] + "/" + p.split("/")[2] for _, p, a in hub.requests if not a}
    assert unauthenticated <= {"lfs-upload/ana", "api/agent-harnesses"}
    assert all(a in ("", f"Bearer {TOKEN}") for _, _, a in hub.requests)
    assert hub.calls("/lfs-upload/", "PUT") == 8 and hub.calls("/lfs-verify/") == 8
    assert TOKEN not in caplog.text
    row = store.query("SELECT * FROM pool_publications")[0]
    assert row["tag"] == "v1.0.0" and TOKEN not in json.dumps(dict(row))
    rows = [json.loads(x) for x in files["metadata.jsonl"].splitlines()]
    assert sorted(r["candidate_id"] for r in rows) == pv.candidate_ids

    # Publishing the same release again changes nothing: no upload, no commit, no tag.
    before = len(hub.requests)
    again = publish(store, "ana/pool", progress=False)
    assert isinstance(again, PublishResult) and not again.committed and not again.tagged
    assert again.commit_oid == result.commit_oid and len(repo.history) == 2
    assert not [r for r in hub.requests[before:] if r[0] in ("PUT", "DELETE")]
    assert hub.calls("/commit/") == 1


def test_server_errors_never_show_the_token(store, hub):
    released(store)
    bad = "hf_wrongTOKENvalue987654321"
    with pytest.raises(PublishError) as err:
        publish(store, "ana/pool", token=bad, progress=False)
    assert bad not in str(err.value) and "401" in str(err.value)


def test_the_cli_publishes_then_a_rerun_says_it_is_already_there(store, hub, monkeypatch, capsys):
    from refpool import cli

    released(store)
    store.close()
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert cli.main(["publish", "--repo", "ana/pool"]) == 0
    out = capsys.readouterr()
    assert "1.0.0 on ana/pool, published: commit" in out.out and TOKEN not in out.out + out.err
    assert "images/  (8 files: images/" in out.out
    assert cli.main(["publish", "--repo", "ana/pool"]) == 0
    assert "already published: tag v1.0.0 names commit" in capsys.readouterr().out
    monkeypatch.setenv("HF_TOKEN", "hf_" + "x" * 30)  # someone else's token: refused, no trace
    assert cli.main(["publish", "--repo", "ana/pool", "--version", "1.0.0"]) == 1
    err = capsys.readouterr().err
    assert "401" in err and "hf_xxxx" not in err
