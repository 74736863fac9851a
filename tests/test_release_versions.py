"""Versions that mean something (issue 33, item 6): an identical release is refused, naming the
version it equals; a version can be withdrawn (its card, `pool versions`, the Hub) with its
files kept for whoever pinned it; `pool diff` gives each change with its reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from factories import add_candidate, add_photo, populate
from huggingface_hub import snapshot_download
from loopback_hub import TOKEN, running

from curation.ratings import record_rating
from pool.dataset.export import export_version
from pool.dataset.publish import PublishError, publish
from pool.dataset.release import release
from pool.selection.draft import build_pool, save_draft
from pool.selection.versions import VersionError, diff_versions, list_versions
from refpool.cli import main
from refpool.core.store import Store, photo_corrections

REPO = "ana/watercolour-pool"
REASON = "heron.jpg's licence was misread; 1.1.0 credits the wrong author"


def rebuild(store: Store, target: int = 8, dup_threshold: float = 0) -> None:
    draft = build_pool(store, target=target, love_fraction=0.5, dup_threshold=dup_threshold)
    save_draft(store, draft)


def rated(store: Store, n: int = 8) -> list[int]:
    ids = populate(store, n)
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    rebuild(store, n)
    return ids


def test_an_identical_release_is_refused_naming_the_version_it_equals(store):
    ids = rated(store)
    first = release(store, with_diversity=False)
    with pytest.raises(VersionError, match=r"exactly what version 1\.0\.0 does"):
        release(store, notes="the same again", with_diversity=False)
    rebuild(store)  # a new draft with the same selection is the same release
    with pytest.raises(VersionError, match=r"version 1\.0\.0"):
        release(store, bump="patch", with_diversity=False)
    assert [v.version for v in list_versions(store)] == [first.version]

    record_rating(store, ids[0], "bo", "okay")  # a new vote: the rows' curator_ratings change
    rebuild(store)
    assert release(store, with_diversity=False).version == "1.1.0"
    # Curators pseudonymised: other rows, so not identical either.
    assert release(store, with_diversity=False, pseudonymise_curators=True).version == "1.2.0"


def test_diff_gives_each_change_with_its_reason(store):
    photo = add_photo(store, "heron.jpg")
    ids = [add_candidate(store, photo, hue=i * 0.12, seed=i) for i in range(6)]
    for i, cid in enumerate(ids):
        record_rating(store, cid, "ana", "love" if i < 3 else "okay")
    rebuild(store, 6)
    release(store, with_diversity=False)

    rejected, moved, twin_of = ids[0], ids[1], ids[3]
    record_rating(store, rejected, "bo", "reject")
    record_rating(store, moved, "ana", "okay")
    # A new painting identical to one of 1.0.0's, loved by two: it ranks first, the old one
    # becomes its near-duplicate.
    twin = add_candidate(store, photo, "coder-b", hue=3 * 0.12, seed=3)
    record_rating(store, twin, "ana", "okay")
    record_rating(store, twin, "bo", "okay")
    fresh = add_candidate(store, photo, hue=0.97, seed=77)
    record_rating(store, fresh, "bo", "love")
    rebuild(store, 8, dup_threshold=1)  # identical PNGs measure 0.001 apart
    release(store, with_diversity=False)

    diff = diff_versions(store, "1.0.0", "1.1.0")
    why = {(c.candidate_id, c.change): c.reason for c in diff.changes}
    assert why[(rejected, "left")].startswith("re-rated reject by bo on ")
    assert why[(moved, "moved")].startswith("re-rated okay by ana on ")
    assert why[(moved, "moved")].endswith(", was love")
    assert why[(twin_of, "left")] == f"near-duplicate of #{twin} (distance 0.0)"  # rounded
    assert why[(twin, "entered")].startswith("newly rated okay by ana on ")
    assert why[(fresh, "entered")].startswith("newly rated love by bo on ")
    summary = diff.summary()
    assert f"  - #{twin_of} (okay): near-duplicate of #{twin}" in summary
    assert json.loads(json.dumps(diff.to_dict()))["changes"]


def test_a_withdrawn_photo_is_the_reason_its_paintings_left(store):
    ids = rated(store)  # three photos
    v1 = release(store, with_diversity=False)
    photo = store.query("SELECT photo_id FROM candidates WHERE id = ?", (ids[0],))[0][0]
    photo_corrections.withdraw(store, photo, "the author asked us to take it down")
    rebuild(store)
    release(store, with_diversity=False)
    left = [c for c in diff_versions(store, "1.0.0", "1.1.0").changes if c.change == "left"]
    gone = {int(c) for c in v1.candidate_ids} & {
        r[0] for r in store.query("SELECT id FROM candidates WHERE photo_id = ?", (photo,))
    }
    assert {c.candidate_id for c in left} == gone and gone
    why = f"its photo #{photo} was withdrawn: the author asked us to take it down"
    assert {c.reason for c in left} == {why}


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    printed = capsys.readouterr()
    return code, printed.out + printed.err


def test_a_withdrawn_version_is_marked_on_its_card_in_versions_and_on_the_hub(
    store, monkeypatch, tmp_path, capsys
):
    ids = rated(store)
    with running(monkeypatch, tmp_path) as hub:
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        release(store, with_diversity=False, repo_id=REPO)
        publish(store, REPO, "1.0.0", progress=False)
        record_rating(store, ids[0], "ana", "reject")
        rebuild(store)
        release(store, with_diversity=False, repo_id=REPO)
        publish(store, REPO, "1.1.0", progress=False)

        # Without a token: withdrawn here, and the command says the Hub is still to be marked.
        monkeypatch.delenv("HF_TOKEN")
        code, out = run(capsys, "pool", "withdraw", "1.1.0", "--reason", REASON)
        assert code == 0, out
        assert "1.1.0 withdrawn: WITHDRAWN " in out and REASON in out
        assert f"not yet marked on the Hub: {REPO} (no token found)" in out
        assert "WITHDRAWN.md" not in hub.repos[REPO].files
        # With one, the same command marks only the Hub.
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        code, out = run(capsys, "pool", "withdraw", "1.1.0", "--reason", REASON)
        assert code == 0 and "1.1.0 was already withdrawn" in out, out
        assert f"marked withdrawn on the Hub: {REPO}" in out

        code, out = run(capsys, "pool", "versions")
        assert "WITHDRAWN " in out and REASON in out.split("1.1.0", 1)[1]
        assert "WITHDRAWN" not in out.split("1.1.0", 1)[0]  # 1.0.0 is not

        repo = hub.repos[REPO]
        main_files = repo.files
        assert REASON in main_files["WITHDRAWN.md"].decode()
        assert "**Withdrawn on " in main_files["README.md"].decode()
        # The tag still names 1.1.0's files: whoever pinned it keeps them, and `datasets` loads it.
        pinned = snapshot_download(
            REPO, repo_type="dataset", revision="v1.1.0", cache_dir=tmp_path / "c"
        )
        assert sorted(p.name for p in (tmp_path / "c").rglob("images/*.png"))
        assert "Withdrawn" not in Path(pinned, "README.md").read_text()
        code_ = (
            "import json, sys, datasets\n"
            "ds = datasets.load_dataset(sys.argv[1], revision='v1.1.0', split='train')\n"
            "print(json.dumps(sorted(set(ds['pool_version']))))\n"
        )
        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf-home")}
        loaded = subprocess.run(
            [sys.executable, "-c", code_, REPO], env=env, capture_output=True, text=True
        )
        assert loaded.returncode == 0, loaded.stderr[-2000:]
        assert json.loads(loaded.stdout.strip().splitlines()[-1]) == ["1.1.0"]

        with pytest.raises(PublishError, match="was withdrawn"):
            publish(store, REPO, "1.1.0", progress=False)
        # Withdrawing again changes nothing, and says so.
        code, out = run(capsys, "pool", "withdraw", "1.1.0", "--reason", "another")
        assert code == 0 and "1.1.0 was already withdrawn" in out and REASON in out
        assert len(repo.messages) == 4  # created, 1.0.0, 1.1.0, the withdrawal

    export = export_version(store, tmp_path / "out", "1.1.0", progress=False)
    card = (tmp_path / "out" / "README.md").read_text()
    assert card.startswith("---\n") and "Withdrawn on " in card.split("# refpool", 1)[0]
    assert any("was withdrawn" in n for n in export.notes)
    assert dict(export.files)["README.md"] == len(card.encode())
