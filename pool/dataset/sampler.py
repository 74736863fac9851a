"""Reference sampler for the RL environment: k references from a released version.

Deterministic in (version, seed): the same call gives the same references from the store or
from an exported/downloaded copy of that version (the draw depends only on the sorted ids of
each tier). The env's published mix is 2 love + 2 okay of 4.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from pool.selection.versions import get_version
from refpool.core.contracts import RELEASE_TIERS  # the file-name prefixes of a release
from refpool.core.errors import RefpoolError
from refpool.core.store import Store, candidates, releases


class SamplerError(RefpoolError, ValueError):
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
    # A frozen version's PNGs are the ones it was released with, not a later re-render.
    frozen = {r.candidate_id: r.image_sha256 for r in releases.rows(store, pv.version)}
    pngs: dict[int, bytes | None] = {}
    for cid in tiers:
        sha = frozen.get(cid) or (found[cid].png_sha if cid in found else None)
        path = store.png_path(sha) if sha else None
        pngs[cid] = path.read_bytes() if path and path.exists() else None
    return pv.version, tiers, pngs


def _from_export(folder: Path, version: str) -> tuple[str, dict[int, str], dict[int, bytes | None]]:
    """Read an exported or downloaded release: its rows from metadata.jsonl, the tier from
    each PNG's file-name prefix (as the RL environment reads it), the bytes from images/."""
    meta = folder / "metadata.jsonl"
    if not meta.exists():
        raise SamplerError(f"{folder} has no metadata.jsonl: export or download a release there")
    tiers: dict[int, str] = {}
    pngs: dict[int, bytes | None] = {}
    found: set[str] = set()
    with meta.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            cid = int(row["candidate_id"])
            png = folder / row["file_name"]
            prefix = png.name.split("_", 1)[0]
            if prefix not in RELEASE_TIERS or prefix != row["tier"]:
                raise SamplerError(
                    f"{png.name}: file-name tier {prefix!r} != row tier {row['tier']!r}"
                )
            tiers[cid] = prefix
            pngs[cid] = png.read_bytes() if png.exists() else None
            found.add(row["pool_version"])
    wanted = version.removeprefix("v")
    if wanted not in ("latest", *found):
        raise SamplerError(f"{folder} holds version {', '.join(sorted(found))}, not {version}")
    return (found.pop() if len(found) == 1 else wanted), tiers, pngs


def sample_references(
    source: Store | Path | str,
    version: str = "latest",
    k: int = 4,
    love: int = 2,
    seed: int = 0,
    rung: int = 0,
) -> list[Reference]:
    """Draw `love` love, `rung` rung and `k - love - rung` okay references, in a seeded
    random order. The env's default weights rung at zero; a pool may still carry rungs."""
    if k < 1 or love < 0 or rung < 0 or love + rung > k:
        raise SamplerError(
            f"need k >= 1 and love + rung <= k (got k={k}, love={love}, rung={rung})"
        )
    if isinstance(source, Store):
        name, tiers, pngs = _from_store(source, version)
    else:
        name, tiers, pngs = _from_export(Path(source), version)
    by_tier = {t: sorted(c for c, tier in tiers.items() if tier == t) for t in RELEASE_TIERS}
    want = {"love": love, "okay": k - love - rung, "rung": rung}
    for tier, n in want.items():
        if n > len(by_tier[tier]):
            raise SamplerError(
                f"version {name} has only {len(by_tier[tier])} {tier} references; asked for {n}"
            )
    rng = random.Random(f"refpool:{name}:{seed}")
    picks = [(c, "love") for c in rng.sample(by_tier["love"], want["love"])]
    picks += [(c, "okay") for c in rng.sample(by_tier["okay"], want["okay"])]
    if rung:  # drawn after the others, so a rung-free draw is what it was before rungs
        picks += [(c, "rung") for c in rng.sample(by_tier["rung"], rung)]
    rng.shuffle(picks)
    return [Reference(c, t, pngs.get(c)) for c, t in picks]
