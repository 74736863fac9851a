"""A release reproduces itself: its rows and files are frozen when it is released (or, for a
release from before m010, at its first export), and every later export or publish writes those
bytes, whatever happened to the store since."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from factories import png_bytes, populate
from loopback_hub import TOKEN, running
from test_pool_export import load_offline

from curation.ratings import record_rating
from pool.dataset.export import PUBLISHED_COLUMNS, ExportError, export_version
from pool.dataset.publish import PublishPlan, PublishResult, publish
from pool.dataset.release import release
from pool.dataset.sampler import sample_references
from pool.selection import draft as draft_module
from pool.selection.draft import build_pool, save_draft
from pool.selection.versions import list_versions
from refpool.core.contracts import ReleaseRow
from refpool.core.store import Store, candidates, migrations, releases
from refpool.core.store.calibration import (
    JudgedPair,
    LadderEntry,
    PreferenceRow,
    save_ladder_entry,
    save_pair,
    save_preference,
)

REPO = "ana/pool"


def drafted(store: Store, n: int = 8) -> list[int]:
    ids = populate(store, n)
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    save_draft(store, build_pool(store, target=n, dup_threshold=0))
    return ids


def folder_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def change_everything(store: Store, ids: list[int]) -> None:
    """What happens to a store after a release: re-rating, re-rendering, re-calibrating."""
    record_rating(store, ids[0], "ana", "reject")
    record_rating(store, ids[1], "bo", "love")
    new_png = store.put_png(png_bytes(0.6, seed=1234))
    new_program = store.put_program("// a revised program\n")
    candidates.save(
        store, {"png_sha": new_png, "program_sha": new_program, "coverage": 0.9}, existing=ids[2]
    )
    save_ladder_entry(store, LadderEntry(ids[3], "heuristic", True, 0.5, 8, 1, "rung"))
    save_pair(store, JudgedPair("heuristic#v1", new_png, "0" * 64, "A", "B", 1.0))
    save_preference(store, PreferenceRow(ids[4], "hpsv3", new_png, "a watercolour", 6.5, 0.25))
    store.db.execute("UPDATE photos SET subject = 'renamed'")


def test_an_export_after_the_store_changed_is_the_release_byte_for_byte(store, tmp_path):
    ids = drafted(store)
    pv = release(store, notes="frozen")
    first = export_version(store, tmp_path / "a", progress=False)
    change_everything(store, ids)
    # The live store now disagrees with the release (so this test can fail)...
    assert candidates.get(store, ids[2]).png_sha != releases.rows(store, pv.version)[2].image_sha256
    second = export_version(store, tmp_path / "b", pv.version, progress=False)
    a, b = folder_bytes(tmp_path / "a"), folder_bytes(tmp_path / "b")
    # ...and the export does not: same file list, same bytes, same summary.
    # (+ 3 files, + 3 training sets: sft, preference, prompts; no chain, so no revisions)
    assert sorted(a) == sorted(b) and len(a) == 2 * len(ids) + 6
    assert all(a[p] == b[p] for p in a)
    assert first.files == second.files and first.rows == second.rows == len(ids)
    assert second.frozen.startswith("frozen at release") and not second.notes

    # metadata.jsonl is the frozen ReleaseRows, its keys in the published order.
    lines = b["metadata.jsonl"].decode().splitlines()
    rows = [ReleaseRow.from_dict(json.loads(x)) for x in lines]
    assert rows == releases.rows(store, pv.version)
    keys = list(json.loads(lines[0]))
    assert keys == [f.name for f in dataclasses.fields(ReleaseRow)]
    assert tuple(keys[: len(PUBLISHED_COLUMNS)]) == PUBLISHED_COLUMNS
    with pytest.raises(ValueError, match="unknown fields"):
        ReleaseRow.from_dict({**json.loads(lines[0]), "extra": 1})
    assert all(r.hpsv3_mu is None and r.subject != "renamed" for r in rows)

    # The sampler draws the released PNGs from the store too, not a later re-render.
    drawn = sample_references(store, pv.version, k=len(ids), love=len(ids) // 2, seed=1)
    assert {r.png for r in drawn} == {b[r.file_name] for r in rows}

    back = load_offline(tmp_path / "b")  # still a dataset `datasets` loads
    assert back["n"] == len(ids) and sorted(back["ids"]) == pv.candidate_ids


def test_scores_are_part_of_the_release_not_of_an_export(store, tmp_path):
    drafted(store, 6)
    pv = release(store, with_diversity=False)
    with pytest.raises(ExportError, match="frozen at release with its preference scores"):
        export_version(store, tmp_path / "x", pv.version, preference_scores={1: 3.0})
    assert not (tmp_path / "x").exists()


def test_a_release_that_cannot_be_frozen_is_not_released(store):
    ids = drafted(store, 6)
    store.png_path(candidates.get(store, ids[0]).png_sha).unlink()
    with pytest.raises(ExportError, match="is missing; restore it or re-render"):
        release(store, with_diversity=False)
    assert list_versions(store) == [] and releases.freezes(store) == {}


@pytest.fixture
def hub(monkeypatch, tmp_path):
    with running(monkeypatch, tmp_path) as fake:
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield fake


def test_publish_uploads_the_frozen_files(store, hub, tmp_path):
    ids = drafted(store)
    pv = release(store, repo_id=REPO)
    export_version(store, tmp_path / "at-release", progress=False)
    change_everything(store, ids)
    result = publish(store, REPO, progress=False)
    assert isinstance(result, PublishResult)
    published = hub.repos[REPO].files
    frozen = folder_bytes(tmp_path / "at-release")
    assert {p: published[p] for p in frozen} == frozen
    assert set(published) - set(frozen) == {".gitattributes"}
    assert f'load_dataset("{REPO}", revision="v{pv.version}"' in published["README.md"].decode()
    # Another repo gets the same bytes, and the plan says whose name the card carries.
    plan = publish(store, "bo/mirror", dry_run=True, progress=False)
    assert isinstance(plan, PublishPlan) and plan.files == result.plan.files
    assert f"names {REPO} in its load snippets, as frozen at release" in plan.summary()


def old_release(home: Path, monkeypatch) -> list[int]:
    """A data folder as it was before m010: migrations up to m009, a version released then."""
    full = list(migrations.MIGRATIONS)
    m010 = migrations.MIGRATIONS.index(releases.m010_frozen_releases)
    monkeypatch.setattr(migrations, "MIGRATIONS", full[:m010])
    # Today's selection reads photo withdrawals (m015), which that schema has not: none then.
    monkeypatch.setattr(draft_module, "withdrawn", lambda store: {})
    old = Store(home)
    ids = drafted(old)
    draft = build_pool(old, target=len(ids), dup_threshold=0)
    pv = draft.to_pool_version("1.0.0", notes="old", created_at="2026-01-05T10:00:00Z")
    old.insert(  # what release() wrote before m010: the manifest, nothing frozen
        "pool_versions",
        {"version": "1.0.0", "manifest": pv.to_dict(), "notes": "old", "params": draft.params},
    )
    old.close()
    monkeypatch.setattr(migrations, "MIGRATIONS", full)
    return ids


def test_a_release_from_before_m010_is_frozen_by_its_first_export_and_says_so(
    refpool_home, monkeypatch, capsys, tmp_path
):
    from refpool import cli

    ids = old_release(refpool_home, monkeypatch)
    store = Store(refpool_home)  # applies m010
    state = releases.freeze_of(store, "1.0.0")
    assert state is not None and state.frozen_by == "m010" and not state.frozen
    assert releases.files(store, "1.0.0") == []
    assert cli.main(["pool", "versions"]) == 0
    assert "released before m010: frozen as its next export writes it" in capsys.readouterr().out

    live = {c: candidates.get(store, c).png_sha for c in ids}  # what today's export shows
    assert cli.main(["export", "--out", str(tmp_path / "a"), "--version", "1.0.0"]) == 0
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    out = capsys.readouterr().out
    assert f"frozen by m010 (as exported on {day})" in out and "released before" in out
    state = releases.freeze_of(store, "1.0.0")
    assert state is not None and state.frozen and state.frozen_by == f"m010 (as exported on {day})"
    rows = releases.rows(store, "1.0.0")
    assert {r.candidate_id: r.image_sha256 for r in rows} == live
    assert all(r.pool_version == "1.0.0" for r in rows)

    change_everything(store, ids)
    export_version(store, tmp_path / "b", "1.0.0", progress=False)
    assert folder_bytes(tmp_path / "a") == folder_bytes(tmp_path / "b")
    assert cli.main(["pool", "versions"]) == 0
    assert f"frozen by m010 (as exported on {day})" in capsys.readouterr().out


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_a_missing_or_corrupt_frozen_blob_is_a_clear_error_that_loses_nothing(
    store, tmp_path, damage
):
    drafted(store, 6)
    pv = release(store, with_diversity=False)
    out = tmp_path / "export"
    export_version(store, out, progress=False)
    before = folder_bytes(out)
    meta = next(f for f in releases.files(store, pv.version) if f.path == "metadata.jsonl")
    blob = store.blob_path(meta.kind, meta.sha256)
    if damage == "missing":
        blob.unlink()
    else:
        blob.write_bytes(blob.read_bytes().replace(b"love", b"okay", 1))
    with pytest.raises(ExportError) as err:
        export_version(store, out, progress=False)
    message = str(err.value)
    assert "metadata.jsonl" in message and str(blob) in message
    assert ("is missing" if damage == "missing" else "does not match its sha256") in message
    assert "Nothing was written" in message and "restore those blobs" in message
    assert folder_bytes(out) == before  # the earlier export is untouched
    assert releases.files(store, pv.version) and releases.freeze_of(store, pv.version).frozen
    # Putting the file back (here: from the earlier export) makes the version exportable again.
    blob.write_bytes(before["metadata.jsonl"])
    export_version(store, tmp_path / "again", progress=False)
    assert folder_bytes(tmp_path / "again") == before
