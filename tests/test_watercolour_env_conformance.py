"""A published release, loaded the way the watercolour RL environment loads its pool.

The environment (HuggingEnvs' 02-watercolour) never calls `datasets`. It pins a revision (a
commit SHA in its code, or WATERCOLOUR_POOL_REVISION; the repo is WATERCOLOUR_POOL_DATASET)
and calls `snapshot_download(repo_type="dataset", allow_patterns=["images/*", "sources/*",
"metadata.jsonl"])`. It lists `images/*.png` sorted by name, reads each reference's tier from
the file-name prefix (`love_`, `okay_`, `rung_`), expects `sources/<same stem>.js` for every
reference, and draws 2 love + 2 okay per comparison: its mix is love 0.5, okay 0.5, rung 0,
renormalised over the tiers present, whole slots first and the remainder largest-fraction
first, `random.Random(seed).sample` within each tier. A pool without tier prefixes falls
back to a uniform draw. This file re-implements that behaviour (not its code) and runs it
against a release published to the loopback Hub through huggingface_hub's real client.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from factories import populate
from huggingface_hub import snapshot_download
from loopback_hub import TOKEN, running

from curation.ratings import record_rating
from pool.dataset.publish import PublishResult, publish
from pool.dataset.release import release
from pool.dataset.sampler import sample_references
from pool.selection.draft import build_pool, save_draft

REPO = "ana/watercolour-reference-pool"
ENV_PATTERNS = ["images/*", "sources/*", "metadata.jsonl"]
MIX = {"love": 0.5, "okay": 0.5, "rung": 0.0}
SEEDS = range(200)


@pytest.fixture
def hub(monkeypatch, tmp_path):
    with running(monkeypatch, tmp_path) as fake:
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield fake


def env_snapshot(cache: Path) -> Path:
    """What the environment's pool loader does, configured through its two variables."""
    return Path(
        snapshot_download(
            repo_id=os.environ["WATERCOLOUR_POOL_DATASET"],
            revision=os.environ["WATERCOLOUR_POOL_REVISION"],
            repo_type="dataset",
            allow_patterns=ENV_PATTERNS,
            cache_dir=cache,
        )
    )


def env_pool(images: Path) -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(images.glob("*.png"))]


def env_draw(pool: list[tuple[str, bytes]], seed: int, wanted: int = 4) -> list[str]:
    """The environment's tiered draw, from its documented behaviour."""
    rng = random.Random(seed)
    present = {t: refs for t in MIX if (refs := [r for r in pool if r[0].startswith(f"{t}_")])}
    if not present:
        return [name for name, _ in rng.sample(pool, min(wanted, len(pool)))]
    total = sum(MIX[t] for t in present)
    exact = {t: wanted * MIX[t] / total for t in present}
    counts = {t: min(len(present[t]), int(exact[t])) for t in present}
    while sum(counts.values()) < wanted:
        room = [t for t in present if counts[t] < len(present[t])]
        if not room:
            break
        counts[max(room, key=lambda t: exact[t] - counts[t])] += 1
    return [name for t in present for name, _ in rng.sample(present[t], counts[t])]


def check_like_the_env(root: Path) -> dict[str, str]:
    """Everything the environment relies on; returns {png name: tier}."""
    assert sorted(p.name for p in root.iterdir()) == ["images", "metadata.jsonl", "sources"]
    pool = env_pool(root / "images")
    assert len(pool) >= 4
    tiers = {name: name.split("_", 1)[0] for name, _ in pool}
    assert set(tiers.values()) == {"love", "okay"}
    for name, png in pool:
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        source = root / "sources" / f"{Path(name).stem}.js"
        assert source.exists(), f"{name} has no sources/{source.name}"
        assert "function setup" in source.read_text() or source.read_text()
    rows = [json.loads(x) for x in (root / "metadata.jsonl").read_text().splitlines()]
    assert sorted(r["file_name"] for r in rows) == [f"images/{n}" for n, _ in pool]
    assert all(r["tier"] == tiers[r["file_name"].removeprefix("images/")] for r in rows)
    draws = [env_draw(pool, seed) for seed in SEEDS]
    mixes = [sorted(tiers[n] for n in d) for d in draws]
    assert sum(m == ["love", "love", "okay", "okay"] for m in mixes) == len(SEEDS)
    assert len({tuple(sorted(d)) for d in draws}) > 20  # the seeds really vary the draw
    return tiers


def rate_all(store, ids: list[int]) -> None:
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")


def test_the_env_loads_a_published_release_at_its_tag_and_its_sha(
    store, hub, monkeypatch, tmp_path
):
    ids = populate(store, 12)
    rate_all(store, ids)
    save_draft(store, build_pool(store, target=12, dup_threshold=0))
    v1 = release(store, version="1.0.0")
    first = publish(store, REPO, v1.version, progress=False)
    assert isinstance(first, PublishResult)

    monkeypatch.setenv("WATERCOLOUR_POOL_DATASET", REPO)
    monkeypatch.setenv("WATERCOLOUR_POOL_REVISION", "v1.0.0")
    at_tag = check_like_the_env(env_snapshot(tmp_path / "cache-tag"))
    monkeypatch.setenv("WATERCOLOUR_POOL_REVISION", first.commit_oid)
    at_sha = check_like_the_env(env_snapshot(tmp_path / "cache-sha"))
    expected = {f"{t}_{int(c):06d}.png": t for c, t in v1.tiers.items()}
    assert at_tag == at_sha == expected
    # refpool's own sampler reads the downloaded snapshot as it reads the store.
    snap = env_snapshot(tmp_path / "cache-sha")
    for seed in (0, 7):
        ours = sample_references(snap, "1.0.0", k=4, love=2, seed=seed)
        assert [r.candidate_id for r in ours] == [
            r.candidate_id for r in sample_references(store, "1.0.0", k=4, love=2, seed=seed)
        ]

    # The same revision is a dataset too, loaded from the Hub by `datasets` (which reads
    # HF_ENDPOINT at import, hence a fresh interpreter): an image column, `tier` the string.
    code = (
        "import json, sys, datasets\n"
        "ds = datasets.load_dataset(sys.argv[1], revision='v1.0.0', split='train')\n"
        "print(json.dumps({'n': len(ds), 'tiers': sorted(set(ds['tier'])),"
        " 'first': ds[0]['tier'] == 'love' or ds[0]['tier'] == 'okay',"
        " 'size': list(ds[0]['image'].size), 'columns': ds.column_names}))\n"
    )
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf-home")}
    out = subprocess.run(
        [sys.executable, "-c", code, REPO], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded["n"] == 12 and loaded["tiers"] == ["love", "okay"] and loaded["first"]
    assert loaded["size"] == [96, 96] and loaded["columns"][:3] == ["image", "source_file", "tier"]


def test_a_second_release_leaves_no_stale_file_and_the_first_stays_pinned(
    store, hub, monkeypatch, tmp_path
):
    ids = populate(store, 12)
    rate_all(store, ids)
    save_draft(store, build_pool(store, target=12, dup_threshold=0))
    v1 = release(store, version="1.0.0")
    publish(store, REPO, v1.version, progress=False)

    # v1.1.0: two references rejected, one moved from love to okay (its file name changes).
    dropped, moved = [ids[0], ids[2]], ids[1]
    for cid in dropped:
        record_rating(store, cid, "ana", "reject")
    record_rating(store, moved, "ana", "okay")
    save_draft(store, build_pool(store, target=12, dup_threshold=0))
    v2 = release(store, version="1.1.0")
    second = publish(store, REPO, v2.version, progress=False)
    assert isinstance(second, PublishResult) and second.plan.deletes

    monkeypatch.setenv("WATERCOLOUR_POOL_DATASET", REPO)
    monkeypatch.setenv("WATERCOLOUR_POOL_REVISION", "v1.1.0")
    tiers = check_like_the_env(env_snapshot(tmp_path / "cache-v2"))
    assert tiers == {f"{t}_{int(c):06d}.png": t for c, t in v2.tiers.items()}
    assert f"love_{moved:06d}.png" not in tiers and f"okay_{moved:06d}.png" in tiers
    assert not any(f"_{cid:06d}." in name for name in tiers for cid in dropped)

    repo = hub.repos[REPO]
    release_files = {p for p, _ in second.plan.files}
    managed = {p for p in repo.files if p != ".gitattributes"}
    assert managed == release_files  # the repo equals the release: nothing stale survived
    assert len(repo.messages) == 3  # created, v1.0.0, v1.1.0: the deletes rode in v1.1.0's commit

    # An env pinned to v1.0.0 still judges against v1.0.0.
    monkeypatch.setenv("WATERCOLOUR_POOL_REVISION", "v1.0.0")
    old = check_like_the_env(env_snapshot(tmp_path / "cache-v1"))
    assert old == {f"{t}_{int(c):06d}.png": t for c, t in v1.tiers.items()}


def test_a_folder_without_tier_prefixes_is_what_the_env_cannot_use(tmp_path):
    """The check can fail: the env's fallback (uniform draw) breaks the 2 + 2 mix."""
    pool = [(f"{i:06d}.png", b"") for i in range(12)]
    names = {n: ("love" if i % 2 else "okay") for i, (n, _) in enumerate(pool)}
    mixes = [sorted(names[n] for n in env_draw(pool, seed)) for seed in SEEDS]
    assert sum(m == ["love", "love", "okay", "okay"] for m in mixes) < len(SEEDS)
