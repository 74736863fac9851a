"""Publishing against the honest loopback Hub: LFS uploads, failures halfway, actionable errors.

Every failure must leave the repo as it was or as the release (never half of one), and the
same command must finish the job when rerun.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from factories import populate
from huggingface_hub import snapshot_download
from loopback_hub import READ_TOKEN, TOKEN, running

from curation.ratings import record_rating
from pool.dataset.publish import PublishError, PublishPlan, PublishResult, publish
from pool.dataset.release import release
from pool.selection.draft import build_pool, save_draft
from refpool import cli
from refpool.core.store import Store

REPO = "ana/pool"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    with running(monkeypatch, tmp_path) as fake:
        fake.server.handle_error = lambda *a: None  # a client that timed out closed its socket
        yield fake


def released(store, n=8, author=None):
    ids = populate(store, n)
    if author:
        store.db.execute("UPDATE photos SET author = ?", (author,))
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    save_draft(store, build_pool(store, target=n, dup_threshold=0))
    return release(store)


def go(store, **kw):
    return publish(store, REPO, token=kw.pop("token", TOKEN), progress=False, **kw)


def post(url: str, body: bytes, token: str = TOKEN) -> int:
    req = urllib.request.Request(url, data=body, method="POST")
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", "application/x-ndjson")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


def test_the_hub_refuses_lfs_pointers_to_objects_never_uploaded(store, hub):
    released(store)
    go(store)
    repo = hub.repos[REPO]
    data = b"\x89PNG\r\n\x1a\n never uploaded"
    header = json.dumps({"key": "header", "value": {"summary": "sneak"}})
    pointer = json.dumps(
        {
            "key": "lfsFile",
            "value": {
                "path": "images/love_999999.png",
                "algo": "sha256",
                "oid": hashlib.sha256(data).hexdigest(),
                "size": len(data),
            },
        }
    )
    url = f"{hub.url}/api/datasets/{REPO}/commit/main"
    assert post(url, f"{header}\n{pointer}\n".encode()) == 422
    inline = json.dumps(
        {
            "key": "file",
            "value": {
                "path": "images/x.png",
                "content": base64.b64encode(data).decode(),
                "encoding": "base64",
            },
        }
    )
    assert post(url, f"{header}\n{inline}\n".encode()) == 400  # binaries must go through LFS
    assert len(repo.history) == 2 and "images/love_999999.png" not in repo.files


def test_release_goes_through_lfs_in_chunks_and_comes_back_byte_for_byte(store, hub, tmp_path):
    released(store)
    work = tmp_path / "release"
    result = go(store, chunk=3, workdir=work)
    assert isinstance(result, PublishResult)
    assert hub.calls("/preupload/") >= 3  # 8 PNGs + 8 programs + 3 files, 3 per round
    assert hub.calls("/commit/") == 1 and hub.calls("/lfs-upload/", "PUT") == 8
    snapshot = hub.repos[REPO].commits[result.commit_oid]
    assert {p for p, e in snapshot.items() if e.lfs} == {p for p in snapshot if p.endswith(".png")}
    got = snapshot_download(REPO, repo_type="dataset", revision="v1.0.0", cache_dir=tmp_path / "c")
    for path, _ in result.plan.files:
        assert (tmp_path / "c").exists()
        assert (work / path).read_bytes() == (Path(got) / path).read_bytes(), path


def test_a_failed_lfs_upload_leaves_the_repo_unchanged_and_a_rerun_finishes(store, hub):
    released(store)
    hub.fail("lfs_put", 403)  # storage refuses one object; not retried by the client
    with pytest.raises(PublishError, match="before any commit: the repo is unchanged") as err:
        go(store)
    message = str(err.value)
    assert "the token needs the `write` role" in message and TOKEN not in message
    # a refusal is no passing failure: fix it first, and the same command resumes
    assert "the same command then resumes: files already uploaded are not sent again" in message
    assert "rerun the same command" not in message.lower()
    repo = hub.repos[REPO]
    assert len(repo.history) == 1 and repo.tags == {}  # as it was: only the creation commit
    landed = len(repo.lfs)
    puts = hub.calls("/lfs-upload/", "PUT")
    result = go(store)
    assert isinstance(result, PublishResult) and repo.tags == {"v1.0.0": repo.head}
    assert hub.calls("/lfs-upload/", "PUT") - puts == 8 - landed  # only what was missing


def test_an_lfs_upload_that_times_out_is_retried(store, hub):
    released(store)
    # The first PUT stalls well past the 3 s timeout (its late answer would be a refusal):
    # only a client that gives up and retries gets through.
    hub.fail("lfs_put", 400, hang=8)
    result = go(store, timeout_s=3)
    assert isinstance(result, PublishResult) and len(hub.repos[REPO].lfs) == 8
    assert hub.calls("/lfs-upload/", "PUT") > 8  # the stalled one was sent again


def test_a_429_on_the_commit_is_retried_after_retry_after(store, hub, capsys):
    released(store)
    hub.fail("commit", 429, retry_after=1)
    result = go(store)
    assert isinstance(result, PublishResult) and result.committed
    repo = hub.repos[REPO]
    assert hub.calls("/commit/") == 2 and len(repo.history) == 2  # one commit landed
    assert "answered 429 to the commit; retrying in 1 s" in capsys.readouterr().err


def test_a_5xx_on_the_tag_after_the_commit_makes_the_rerun_only_tag(store, hub):
    released(store)
    hub.fail("tag", 503)
    with pytest.raises(
        PublishError, match="holds the release, but tagging it v1.0.0 failed"
    ) as err:
        go(store)
    # a 503 may pass: a rerun is the advice, and what it skips is said
    assert "rerun the same command; it finds the release already committed" in str(err.value)
    repo = hub.repos[REPO]
    assert len(repo.history) == 2 and repo.tags == {}  # the release is committed, untagged
    commits, puts = hub.calls("/commit/"), hub.calls("/lfs-upload/", "PUT")
    result = go(store)
    assert isinstance(result, PublishResult) and not result.committed and result.tagged
    assert hub.calls("/commit/") == commits and hub.calls("/lfs-upload/", "PUT") == puts
    assert repo.tags == {"v1.0.0": repo.head} and len(repo.history) == 2


def test_a_read_only_token_is_refused_naming_the_scope_before_any_write(store, hub):
    released(store)
    with pytest.raises(PublishError, match="read-only: publishing needs the `write` role"):
        go(store, token=READ_TOKEN)
    assert not [r for r in hub.requests if r[0] in ("POST", "PUT") and "whoami" not in r[1]]
    assert REPO not in hub.repos


def test_someone_elses_repo_is_refused(store, hub):
    released(store)
    with pytest.raises(PublishError, match="bo/pool belongs to bo, and the token is ana's"):
        publish(store, "bo/pool", token=TOKEN, progress=False)
    hub.orgs["ana"] = ["studio"]  # an organization ana writes to is fine
    assert isinstance(publish(store, "studio/pool", token=TOKEN, progress=False), PublishResult)


def test_a_tag_with_other_contents_is_refused_unless_forced(store, hub, tmp_path):
    released(store)
    first = go(store)
    assert isinstance(first, PublishResult)
    # A frozen release never changes, so other contents under v1.0.0 can only come from
    # another 1.0.0: here another data folder's, with other credits.
    other = Store(tmp_path / "other-data")
    released(other, author="someone else")
    store = other
    with pytest.raises(PublishError, match="would silently start") as err:
        go(store)
    assert err.value.hints == ("force tag",)  # the CLI names its flag
    repo = hub.repos[REPO]
    assert repo.tags == {"v1.0.0": first.commit_oid} and len(repo.history) == 2
    moved = go(store, force_tag=True)
    assert isinstance(moved, PublishResult) and moved.commit_oid != first.commit_oid
    assert repo.tags == {"v1.0.0": moved.commit_oid}
    assert b"someone else" in repo.files["metadata.jsonl"]


def test_a_private_repo_is_noted_in_the_plan(store, hub):
    released(store)
    plan = publish(store, REPO, private=True, dry_run=True, progress=False)
    assert isinstance(plan, PublishPlan) and "note: the repo is private" in plan.summary()
    result = go(store, private=True)
    assert (
        isinstance(result, PublishResult) and "HF_TOKEN with read access" in result.plan.summary()
    )


def test_a_fine_grained_token_without_write_access_gets_the_scope_named(store, hub):
    released(store)
    fine = "hf_loopbackFINEgrained123456789abc"
    hub.tokens[fine] = ("ana", "fineGrained")  # whoami cannot tell; the Hub answers 403
    with pytest.raises(PublishError, match="403 Forbidden\\): the token needs the `write` role"):
        go(store, token=fine)
    assert REPO not in hub.repos


def test_files_marked_lfs_in_gitattributes_go_through_lfs_too(store, hub, tmp_path):
    from huggingface_hub import HfApi
    from loopback_repo import Entry

    released(store)
    HfApi(endpoint=hub.url, token=TOKEN).create_repo(REPO, repo_type="dataset")
    repo = hub.repos[REPO]
    marked = (
        b"*.png filter=lfs diff=lfs merge=lfs -text\n*.jsonl filter=lfs diff=lfs merge=lfs -text\n"
    )
    repo.commits[repo.head][".gitattributes"] = Entry(marked, lfs=False)
    result = go(store)
    assert isinstance(result, PublishResult)
    snapshot = repo.commits[result.commit_oid]
    assert snapshot["metadata.jsonl"].lfs and not snapshot["README.md"].lfs
    got = snapshot_download(REPO, repo_type="dataset", revision="v1.0.0", cache_dir=tmp_path / "c")
    assert (Path(got) / "metadata.jsonl").read_bytes() == snapshot["metadata.jsonl"].data


def test_a_commit_whose_reply_is_lost_is_not_made_twice(store, hub):
    released(store)
    hub.fail("commit_lost", 502)  # applied, then answered 502: the client retries
    result = go(store)
    assert isinstance(result, PublishResult)
    repo = hub.repos[REPO]
    assert hub.calls("/commit/") == 2  # the retry was refused (412: its parent moved on)
    assert len(repo.history) == 2 and repo.tags == {"v1.0.0": repo.head}


def closed_port() -> int:
    """A loopback port nothing listens on: connecting to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_hub_that_cannot_be_reached_is_named_with_the_way_to_publish_offline(
    store, hub, monkeypatch, capsys
):
    released(store)
    nowhere = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(PublishError) as err:
        go(store, endpoint=nowhere)
    message = str(err.value)
    assert f"the Hub at {nowhere} could not be reached" in message
    assert "Connection refused" in message and "$HF_ENDPOINT" in message
    assert "rerun" not in message.lower()  # a rerun would meet the same closed port
    assert err.value.hints == ("choose an endpoint", "export offline")
    assert hub.requests == []  # the loopback Hub (HF_ENDPOINT) was not asked instead
    # the command line turns the hints into the flag and the offline command
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert cli.main(["publish", "--repo", REPO, "--endpoint", nowhere]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[-2:] == [
        "hint: pass --endpoint URL (or set $HF_ENDPOINT)",
        "hint: `refpool export --out DIR` writes the release to a folder, with no network",
    ]


def test_a_self_hosted_hub_without_xet_gets_told_to_upload_over_lfs(store, hub, monkeypatch):
    pytest.importorskip("hf_xet")  # without it, huggingface_hub never tries Xet
    import huggingface_hub.constants as hc

    released(store)
    monkeypatch.setattr(hc, "HF_HUB_DISABLE_XET", False)  # as on a machine with hf_xet
    with pytest.raises(PublishError, match="before any commit: the repo is unchanged") as err:
        go(store)
    message = str(err.value)
    assert f"{hub.url} is not huggingface.co" in message
    assert "set HF_HUB_DISABLE_XET=1 to upload over plain Git LFS" in message
    assert "xet-write-token" in message  # the Hub's own answer, in parentheses
    repo = hub.repos[REPO]
    assert len(repo.history) == 1 and repo.tags == {}
    monkeypatch.setattr(hc, "HF_HUB_DISABLE_XET", True)  # the advice, followed
    result = go(store)
    assert isinstance(result, PublishResult) and repo.tags == {"v1.0.0": repo.head}


def test_only_a_hub_other_than_huggingface_co_gets_the_xet_advice():
    from pool.dataset.hubsync import is_huggingface

    assert is_huggingface("https://huggingface.co") and is_huggingface("https://hf.co/")
    assert not is_huggingface("http://127.0.0.1:8080")
    assert not is_huggingface("https://hub.example.org")
    assert not is_huggingface("https://huggingface.co.example.org")
