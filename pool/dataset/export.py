"""Export a pool version as a release: the layout the RL environment downloads, which is also
an imagefolder dataset that `datasets.load_dataset` and the Hub viewer read.

    DIR/images/<tier>_<id>.png     the paintings; the file-name prefix is the tier (love_, okay_)
    DIR/sources/<tier>_<id>.js     the p5.brush program of each painting, same stem
    DIR/metadata.jsonl             one row per image: `file_name` (a string path, images/...),
                                   `tier` (a string), and every provenance column
    DIR/photo_attribution.json     every reference photo, its licence and who made it
    DIR/README.md                  the dataset card; its config points `datasets` at the above

metadata.jsonl is the one source of truth: `datasets` reads it through the card's config, the
environment reads tiers from the file names it lists. Files are copied and rows written one at
a time, so a big pool is exported in bounded memory. The licence of each row follows from its
photo; a row whose photo lacks an open licence or attribution stops the export.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from pool.catalog import PoolEntry, ineligibility, load_entries
from pool.dataset import provenance
from pool.dataset.card import dataset_card
from pool.dataset.provenance import HUB_LICENCE, ROW_LICENCE, ROW_LICENCE_URL
from pool.diversity.analysis import analyse
from pool.selection.versions import get_version
from refpool.core.contracts import PoolVersion
from refpool.core.store import Store, calibration

TIER_NAMES = ["love", "okay", "rung"]  # rung: calibrated to the policy (pool.reward.ladder)
# What a release consists of; publishing deletes anything else under these from the repo.
RELEASE_DIRS = ("images/", "sources/", "data/")
RELEASE_FILES = ("metadata.jsonl", "photo_attribution.json", "README.md")
# The published pool's 13 columns, in its order; the provenance columns follow them.
PUBLISHED_COLUMNS = (
    "file_name",
    "source_file",
    "tier",
    "subject",
    "generator_model",
    "refinement_round",
    "hpsv3_mu",
    "paint_coverage",
    "gate_errors",
    "reference_photo",
    "reference_photo_licence",
    "reference_photo_attribution",
    "reference_photo_url",
)
LICENCE_RANK = ["cc0", "cc-by", "cc-by-sa"]


class ExportError(ValueError):
    pass


@dataclass
class ExportResult:
    out_dir: Path
    version: str
    rows: int
    files: list[tuple[str, int]]  # (path relative to out_dir, bytes)
    licence: str  # the Hub identifier of the most restrictive row licence


def describe_files(files: list[tuple[str, int]], verbose: bool = False) -> list[str]:
    """One line per file, or per folder (its file count and first file) unless `verbose`."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for path, size in files:
        key = path.split("/", 1)[0] + "/" if "/" in path and not verbose else path
        groups.setdefault(key, []).append((path, size))
    lines = []
    for name, items in groups.items():
        size = sum(s for _, s in items)
        if len(items) == 1 and items[0][0] == name:
            lines.append(f"  {size:>12,d}  {name}")
        else:
            lines.append(f"  {size:>12,d}  {name}  ({len(items)} files: {items[0][0]}, ...)")
    return lines


def stem(tier: str, candidate_id: int) -> str:
    """The shared name of a painting's PNG and program: the tier is its prefix."""
    return f"{tier}_{candidate_id:06d}"


def check_exportable(entries: dict[int, PoolEntry], tiers: dict[int, str]) -> None:
    """Refuse (naming every offender) rather than publish an unlicensed or unrated image.

    A released version is judged by the tiers it was released with: re-rating a candidate
    later does not change a version, but a photo's licence or a candidate's gate result does.
    """
    problems = []
    for cid, tier in sorted(tiers.items()):
        entry = entries.get(cid)
        if entry is None:
            problems.append(f"candidate {cid} is not in the store")
        elif tier not in TIER_NAMES:
            problems.append(f"candidate {cid}: tier {tier!r} cannot be exported")
        elif why := ineligibility(replace(entry, tier=tier)):
            problems.append(f"candidate {cid}: {why[1]}")
        elif not entry.candidate.program_sha:
            problems.append(f"candidate {cid}: no program is stored, so sources/ would lack it")
    if problems:
        more = f" (+{len(problems) - 10} more)" if len(problems) > 10 else ""
        raise ExportError(
            "cannot export: "
            + "; ".join(problems[:10])
            + more
            + ". Fix the photo records or release a version without these candidates."
        )


def _row(
    store: Store,
    entry: PoolEntry,
    tier: str,
    version: str,
    score: tuple[float, float | None] | None,
) -> dict[str, Any]:
    c, photo = entry.candidate, entry.photo
    name = stem(tier, c.id)
    libs, profile = provenance.render_info(store, c)
    row_licence = ROW_LICENCE[photo.licence]
    return {
        "file_name": f"images/{name}.png",
        "source_file": f"sources/{name}.js",
        "tier": tier,
        "subject": photo.subject,
        "generator_model": c.generator,
        "refinement_round": c.round,
        "hpsv3_mu": score[0] if score else None,
        "paint_coverage": c.coverage,
        "gate_errors": len(c.violations),
        "reference_photo": photo.file_name,
        "reference_photo_licence": provenance.PHOTO_LICENCE_CODE[photo.licence],
        "reference_photo_attribution": provenance.attribution(photo),
        "reference_photo_url": photo.source_url,
        "reference_photo_licence_version": photo.licence_version,
        "reference_photo_licence_url": provenance.photo_licence_url(photo),
        "licence": row_licence,
        "licence_url": ROW_LICENCE_URL[row_licence],
        "attribution": provenance.adapted_from(photo),
        "candidate_id": c.id,
        "parent_id": c.parent_id,
        "program_source": store.program_source(c.program_sha) if c.program_sha else "",
        "program_sha256": c.program_sha or "",
        "image_sha256": c.png_sha or "",
        "seed": c.seed,
        "gate_profile": profile,
        "gate_violations": json.dumps([v.to_dict() for v in c.violations]),
        "renderer_versions": json.dumps(libs, sort_keys=True),
        "critique_history": json.dumps(provenance.critique_history(store, c.id)),
        "curator_ratings": [{"curator": n, "tier": t} for n, t in sorted(entry.votes.items())],
        "hpsv3_sigma": score[1] if score else None,
        "pool_version": version,
    }


def _check_target(out: Path) -> None:
    """Refuse a folder that holds anything but an earlier release: clearing it would lose it."""
    if not out.is_dir():
        return
    names = {p.name + ("/" if p.is_dir() else "") for p in out.iterdir()}
    foreign = sorted(names - set(RELEASE_DIRS) - set(RELEASE_FILES))
    ours = names & {"metadata.jsonl", "data/", "images/"}
    if foreign or (names and not ours):
        shown = ", ".join(foreign[:5] or sorted(names)[:5])
        raise ExportError(
            f"{out} holds files that are not a refpool release ({shown}); exporting replaces"
            " the folder's release files, so choose an empty or new folder"
        )


def _clear_release(out: Path) -> None:
    """Remove what an earlier export left in the folder, so it holds exactly this release."""
    for folder in RELEASE_DIRS:
        shutil.rmtree(out / folder, ignore_errors=True)
    for name in RELEASE_FILES:
        (out / name).unlink(missing_ok=True)


def _write_items(
    store: Store,
    out: Path,
    pv: PoolVersion,
    ordered: list[PoolEntry],
    scores: Mapping[int, tuple[float, float | None]],
    progress: bool,
) -> Iterator[str]:
    """Copy each PNG, write its program and its metadata row; yield each file written."""
    (out / "images").mkdir(parents=True)
    (out / "sources").mkdir()
    tiers = {int(k): v for k, v in pv.tiers.items()}
    bar = tqdm(ordered, desc="export", unit="image", file=sys.stderr, disable=not progress)
    with (out / "metadata.jsonl").open("w", encoding="utf-8") as meta:
        for entry in bar:
            c = entry.candidate
            png = store.png_path(c.png_sha or "")
            if not png.exists():
                raise ExportError(
                    f"candidate {c.id}: PNG {png} is missing; restore it or re-render"
                )
            row = _row(store, entry, tiers[c.id], pv.version, scores.get(c.id))
            shutil.copyfile(png, out / row["file_name"])
            (out / row["source_file"]).write_text(row["program_source"], "utf-8")
            meta.write(json.dumps(row, ensure_ascii=False) + "\n")
            yield row["file_name"]
            yield row["source_file"]
    yield "metadata.jsonl"


def _photo_attribution(entries: list[PoolEntry]) -> list[dict[str, Any]]:
    by_id: dict[int, dict[str, Any]] = {}
    for e in entries:
        p = e.photo
        item = by_id.setdefault(
            p.id,
            {
                "file": p.file_name,
                "author": p.author,
                "licence": provenance.PHOTO_LICENCE_CODE[p.licence],
                "licence_version": p.licence_version,
                "licence_url": provenance.photo_licence_url(p),
                "source_url": p.source_url,
                "subject": p.subject,
                "attribution": provenance.attribution(p),
                "paintings_licence": ROW_LICENCE[p.licence],
                "paintings": [],
            },
        )
        item["paintings"].append(f"images/{stem(e.tier or '', e.id)}.png")
    return sorted(by_id.values(), key=lambda x: x["file"])


def export_version(
    store: Store,
    out_dir: Path | str,
    version: str | PoolVersion = "latest",
    progress: bool = True,
    with_diversity: bool = True,
    repo_id: str | None = None,
    preference_scores: Mapping[int, float | tuple[float, float | None]] | None = None,
    scorer: str | None = None,
) -> ExportResult:
    """Write the release of a version into out_dir (replacing an earlier export there).

    `repo_id` names the Hub repo in the card's load snippets. `preference_scores`
    (candidate id -> HPSv3 mu, or (mu, sigma), from the `scorer` named) fill `hpsv3_mu` and
    `hpsv3_sigma`; by default they are what `refpool score` stored, and null when it never ran.
    """
    pv = version if isinstance(version, PoolVersion) else get_version(store, version)
    if not pv.candidate_ids:
        raise ExportError(f"version {pv.version} is empty; nothing to export")
    tiers = {int(k): v for k, v in pv.tiers.items()}
    found = load_entries(store, tiers)
    check_exportable(found, tiers)
    # Each entry carries the tier it was released with (not today's), as its file name does.
    ordered = [replace(found[c], tier=tiers[c]) for c in sorted(tiers)]
    out = Path(out_dir)
    _check_target(out)
    out.mkdir(parents=True, exist_ok=True)
    _clear_release(out)
    if preference_scores is None:
        stored = calibration.preferences(store, scorer)
        preference_scores = {c: (r.hpsv3_mu, r.hpsv3_sigma) for c, r in stored.items()}
        scorer = scorer or ", ".join(sorted({r.scorer for r in stored.values()})) or None
    scores = {
        cid: (value if isinstance(value, tuple) else (value, None))
        for cid, value in preference_scores.items()
        if cid in tiers
    }
    files = list(_write_items(store, out, pv, ordered, scores, progress))
    (out / "photo_attribution.json").write_text(
        json.dumps(_photo_attribution(ordered), indent=1, ensure_ascii=False) + "\n", "utf-8"
    )
    files.append("photo_attribution.json")
    worst = max((ROW_LICENCE[e.photo.licence] for e in ordered), key=LICENCE_RANK.index)
    diversity = analyse(store, tiers, pv.version).metrics if with_diversity else None
    card = dataset_card(
        store,
        pv,
        ordered,
        HUB_LICENCE[worst],
        diversity,
        repo_id=repo_id,
        scorer=scorer if scores else None,
    )
    (out / "README.md").write_text(card, "utf-8")
    files.append("README.md")
    sized = [(rel, (out / rel).stat().st_size) for rel in sorted(files)]
    return ExportResult(out, pv.version, len(ordered), sized, HUB_LICENCE[worst])
