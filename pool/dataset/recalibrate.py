"""A ladder that follows the policy, in one command: `refpool pool recalibrate --paintings DIR`.

A folder of the newest policy paintings (the "film") is judged against the candidates, which
refreshes every ladder entry and so the rung tier; the latest draft is rebuilt with its own
parameters; and, when that moves any reference, the next version is released with notes that
name the film by its size and a hash of its paintings (their sha256s, sorted: names and order
do not matter). The same film against the same store reuses every stored verdict, moves
nothing and releases nothing, so re-running it is safe.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pool.dataset.release import release
from pool.reward.judge import PairJudge, judge_label
from pool.reward.ladder import (
    CalibrationError,
    CalibrationResult,
    Painting,
    calibrate,
    choose_paintings,
    folder_paintings,
)
from pool.reward.verdict_progress import VerdictProgress
from pool.selection.draft import build_pool, latest_draft, save_draft
from pool.selection.versions import VersionDiff, candidate_ids_for, diff_tiers, list_versions
from refpool.core.contracts import PoolVersion
from refpool.core.store import Store, releases


@dataclass(frozen=True)
class Film:
    folder: str
    paintings: list[Painting]

    @property
    def sha256(self) -> str:
        shas = sorted(p.sha for p in self.paintings)
        return hashlib.sha256("\n".join(shas).encode("ascii")).hexdigest()

    @property
    def size(self) -> int:
        return sum(len(p.png) for p in self.paintings)

    @property
    def label(self) -> str:
        return (
            f"film {self.sha256[:12]} ({len(self.paintings)} paintings,"
            f" {self.size:,} bytes, from {Path(self.folder).name})"
        )


@dataclass(frozen=True)
class Recalibration:
    film: Film
    calibration: CalibrationResult
    released: PoolVersion | None  # the new version, or None when nothing moved
    current: str | None  # the version that stays current when nothing moved
    moved: VersionDiff | None

    def summary(self) -> str:
        lines = [self.film.label, self.calibration.summary()]
        if self.released is None:
            stays = f"version {self.current} stays current" if self.current else "nothing released"
            lines.append(f"the ladder against this film moves no reference: {stays}")
        else:
            lines.append(f"released {self.released.version}: {self.released.notes}")
            if self.moved is not None:
                lines.append(self.moved.summary())
        return "\n".join(lines)


async def recalibrate_ladder(
    store: Store,
    judge: PairJudge,
    folder: str,
    samples: int = 6,
    which: str = "all",
    progress: VerdictProgress | None = None,
) -> tuple[Film, CalibrationResult]:
    """Judge the film against the candidates (`which`: all, pool or a VERSION)."""
    film = Film(folder, folder_paintings(folder))
    chosen, dropped = choose_paintings(film.paintings, samples)
    ids = candidate_ids_for(store, which)
    if not ids:
        raise CalibrationError(f"no candidates in {which!r} to calibrate")
    result = await calibrate(store, judge, chosen, ids, f"{film.label}", dropped, progress=progress)
    return film, result


def release_if_moved(store: Store, film: Film, result: CalibrationResult) -> Recalibration:
    """Rebuild the latest draft with its own parameters; release it only if it moved."""
    draft = latest_draft(store)
    if draft is None:
        raise CalibrationError(
            "there is no draft to refresh: build one once with a share of rung references"
            " (`refpool pool build`), then recalibrate",
            hint="give a rung share",
        )
    fresh = build_pool(store, **draft.params)
    versions = list_versions(store)
    latest = versions[-1] if versions else None
    before = {int(k): v for k, v in latest.tiers.items()} if latest else {}
    if latest is not None and before == fresh.tiers:
        return Recalibration(film, result, None, latest.version, None)
    save_draft(store, fresh)
    repo = None
    if latest is not None and (frozen := releases.freeze_of(store, latest.version)):
        repo = frozen.repo_id
    label = judge_label(result.judge, result.heuristic)
    notes = f"recalibrated: the ladder re-run against {film.label} (sha256 {film.sha256});"
    notes += f" judge {label}"
    pv = release(store, notes=notes, draft=fresh, repo_id=repo)
    moved = diff_tiers(before, fresh.tiers, latest.version if latest else "none", pv.version)
    return Recalibration(film, result, pv, None, moved)
