"""Reference sampler for the RL environment: k references from a released version.

Deterministic in (version, seed): the same call gives the same references from the store or
from an exported/downloaded copy of that version (the draw depends only on the sorted ids of
each tier). The env's published mix is 2 love + 2 okay of 4.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from pool.versions import get_version
from refpool.store import Store, candidates

TIER_NAMES = ("love", "okay")  # ClassLabel order in the export


class SamplerError(ValueError):
    pass


@dataclass(frozen=True)
class Reference:
    candidate_id: int
    tier: str
    png: bytes | None  # None when the store no longer has the file


def _from_store(store: Store, version: str) -> tuple[str, dict[int, str], dict[int, bytes | None]]:
    pv = get_version(store, version)
    tiers = {int(k): v for k, v in pv.tiers.items()}
    found = candidates.get_many(store, tiers)
    pngs: dict[int, bytes | None] = {}
    for cid in tiers:
        sha = found[cid].png_sha if cid in found else None
        path = store.png_path(sha) if sha else None
        pngs[cid] = path.read_bytes() if path and path.exists() else None
    return pv.version, tiers, pngs


def _from_export(folder: Path, version: str) -> tuple[str, dict[int, str], dict[int, bytes | None]]:
    files = sorted((folder / "data").glob("*.parquet"))
    if not files:
        raise SamplerError(f"{folder} has no data/*.parquet: export a version there first")
    tiers: dict[int, str] = {}
    pngs: dict[int, bytes | None] = {}
    found: set[str] = set()
    for f in files:
        table = pq.read_table(f, columns=["candidate_id", "tier", "file_name", "pool_version"])
        for row in table.to_pylist():
            cid = int(row["candidate_id"])
            tiers[cid] = TIER_NAMES[row["tier"]]
            pngs[cid] = row["file_name"]["bytes"]
            found.add(row["pool_version"])
    wanted = version.removeprefix("v")
    if wanted not in ("latest", *found):
        raise SamplerError(f"{folder} holds version {', '.join(sorted(found))}, not {version}")
    return (found.pop() if len(found) == 1 else wanted), tiers, pngs


def sample_references(
    source: Store | Path | str, version: str = "latest", k: int = 4, love: int = 2, seed: int = 0
) -> list[Reference]:
    """Draw `love` love and `k - love` okay references, in a seeded random order."""
    if k < 1 or not 0 <= love <= k:
        raise SamplerError(f"need k >= 1 and 0 <= love <= k (got k={k}, love={love})")
    if isinstance(source, Store):
        name, tiers, pngs = _from_store(source, version)
    else:
        name, tiers, pngs = _from_export(Path(source), version)
    by_tier = {t: sorted(c for c, tier in tiers.items() if tier == t) for t in TIER_NAMES}
    want = {"love": love, "okay": k - love}
    for tier, n in want.items():
        if n > len(by_tier[tier]):
            raise SamplerError(
                f"version {name} has only {len(by_tier[tier])} {tier} references; asked for {n}"
            )
    rng = random.Random(f"refpool:{name}:{seed}")
    picks = [(c, "love") for c in rng.sample(by_tier["love"], want["love"])]
    picks += [(c, "okay") for c in rng.sample(by_tier["okay"], want["okay"])]
    rng.shuffle(picks)
    return [Reference(c, t, pngs.get(c)) for c, t in picks]
