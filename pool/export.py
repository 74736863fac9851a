"""Export a pool version in the Hugging Face Hub layout.

    DIR/README.md                               dataset card (YAML metadata + attribution)
    DIR/data/train-00000-of-0000N.parquet       rows with the PNG bytes embedded (datasets Image)

Columns are a superset of the published pool's: its 13 columns (`file_name` to
`reference_photo_url` in FEATURES) come first, then the provenance. The licence of each row
follows from its photo: a CC-BY-SA photo makes its painting share-alike; the card's licence
is the most restrictive one present. A row whose photo lacks an open licence or attribution
stops the export: it can never reach a dataset.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import datasets.utils as datasets_progress
from datasets import ClassLabel, Dataset, Features, Image, List, Value
from tqdm import tqdm

from pool import provenance
from pool.analysis import analyse
from pool.card import dataset_card
from pool.catalog import PoolEntry, ineligibility, load_entries
from pool.versions import get_version
from refpool.contracts import PoolVersion
from refpool.store import Store

TIER_NAMES = ["love", "okay"]
MAX_SHARD_BYTES = 256 * 1024 * 1024
# Output licence per photo licence: derivatives of BY-SA must stay BY-SA; BY needs credit.
ROW_LICENCE = {"CC-BY-SA": "cc-by-sa-4.0", "CC-BY": "cc-by-4.0", "CC0": "cc0-1.0", "PD": "cc0-1.0"}
LICENCE_RANK = ["cc0-1.0", "cc-by-4.0", "cc-by-sa-4.0"]

FEATURES = Features(
    {
        "file_name": Image(),
        "source_file": Value("string"),
        "tier": ClassLabel(names=TIER_NAMES),
        "subject": Value("string"),
        "generator_model": Value("string"),
        "refinement_round": Value("int32"),
        "hpsv3_mu": Value("float64"),
        "paint_coverage": Value("float64"),
        "gate_errors": Value("int32"),
        "reference_photo": Value("string"),
        "reference_photo_licence": Value("string"),
        "reference_photo_attribution": Value("string"),
        "reference_photo_url": Value("string"),
        "licence": Value("string"),
        "candidate_id": Value("int64"),
        "parent_id": Value("int64"),
        "program_source": Value("string"),
        "program_sha256": Value("string"),
        "image_sha256": Value("string"),
        "seed": Value("int64"),
        "gate_profile": Value("string"),
        "gate_violations": Value("string"),  # JSON list of {code, message, line}
        "renderer_versions": Value("string"),  # JSON {library: version}
        "critique_history": Value("string"),  # JSON list, oldest round first
        "curator_ratings": List({"curator": Value("string"), "tier": Value("string")}),
        "pool_version": Value("string"),
    }
)


class ExportError(ValueError):
    pass


@dataclass
class ExportResult:
    out_dir: Path
    version: str
    rows: int
    files: list[tuple[str, int]]  # (path relative to out_dir, bytes)
    licence: str


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
    if problems:
        more = f" (+{len(problems) - 10} more)" if len(problems) > 10 else ""
        raise ExportError(
            "cannot export: "
            + "; ".join(problems[:10])
            + more
            + ". Fix the photo records or release a version without these candidates."
        )


def build_rows(
    store: Store, pv: PoolVersion, progress: bool = True
) -> tuple[dict[str, list[Any]], list[PoolEntry]]:
    tiers = {int(k): v for k, v in pv.tiers.items()}
    entries = load_entries(store, tiers)
    check_exportable(entries, tiers)
    cols: dict[str, list[Any]] = {name: [] for name in FEATURES}
    ordered = [entries[c] for c in sorted(tiers)]
    rows = tqdm(ordered, desc="export rows", unit="row", file=sys.stderr, disable=not progress)
    for entry in rows:
        c, photo = entry.candidate, entry.photo
        png_sha = c.png_sha or ""  # check_exportable refused candidates without a PNG
        path = store.png_path(png_sha)
        if not path.exists():
            raise ExportError(f"candidate {c.id}: PNG {path} is missing; restore it or re-render")
        libs, profile = provenance.render_info(store, c)
        values = {
            "file_name": {"bytes": path.read_bytes(), "path": f"{c.id:06d}.png"},
            "source_file": f"programs/{c.id:06d}.js",
            "tier": tiers[c.id],
            "subject": photo.subject,
            "generator_model": c.generator,
            "refinement_round": c.round,
            "hpsv3_mu": None,  # not computed here; kept for the published schema
            "paint_coverage": c.coverage,
            "gate_errors": len(c.violations),
            "reference_photo": photo.file_name,
            "reference_photo_licence": photo.licence_label,
            "reference_photo_attribution": provenance.attribution(photo),
            "reference_photo_url": photo.source_url,
            "licence": ROW_LICENCE[photo.licence],
            "candidate_id": c.id,
            "parent_id": c.parent_id,
            "program_source": store.program_source(c.program_sha) if c.program_sha else "",
            "program_sha256": c.program_sha or "",
            "image_sha256": png_sha,
            "seed": c.seed,
            "gate_profile": profile,
            "gate_violations": json.dumps([v.to_dict() for v in c.violations]),
            "renderer_versions": json.dumps(libs, sort_keys=True),
            "critique_history": json.dumps(provenance.critique_history(store, c.id)),
            "curator_ratings": [{"curator": n, "tier": t} for n, t in sorted(entry.votes.items())],
            "pool_version": pv.version,
        }
        for name, value in values.items():
            cols[name].append(value)
    return cols, ordered


def export_version(
    store: Store,
    out_dir: Path | str,
    version: str | PoolVersion = "latest",
    max_shard_bytes: int = MAX_SHARD_BYTES,
    progress: bool = True,
    with_diversity: bool = True,
) -> ExportResult:
    """Write README.md and data/train-*.parquet for a released version into out_dir."""
    pv = version if isinstance(version, PoolVersion) else get_version(store, version)
    if not pv.candidate_ids:
        raise ExportError(f"version {pv.version} is empty; nothing to export")
    cols, entries = build_rows(store, pv, progress=progress)
    out = Path(out_dir)
    data_dir = out / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob("train-*.parquet"):  # shards of an earlier export
        old.unlink()
    ds = Dataset.from_dict(cols, features=FEATURES)
    total = sum(len(c["bytes"]) for c in cols["file_name"])
    shards = max(1, math.ceil(total / max_shard_bytes))
    files: list[str] = []
    quiet = not progress and not datasets_progress.are_progress_bars_disabled()
    if quiet:
        datasets_progress.disable_progress_bars()
    try:
        for i in range(shards):
            rel = f"data/train-{i:05d}-of-{shards:05d}.parquet"
            ds.shard(shards, i, contiguous=True).to_parquet(str(out / rel))
            files.append(rel)
    finally:
        if quiet:
            datasets_progress.enable_progress_bars()
    licence = max((ROW_LICENCE[e.photo.licence] for e in entries), key=LICENCE_RANK.index)
    diversity = (
        analyse(store, {int(k): v for k, v in pv.tiers.items()}, pv.version).metrics
        if with_diversity
        else None
    )
    card = dataset_card(store, pv, entries, licence, ds, diversity, files)
    (out / "README.md").write_text(card, "utf-8")
    files.append("README.md")
    sized = [(rel, (out / rel).stat().st_size) for rel in sorted(files)]
    return ExportResult(out, pv.version, len(entries), sized, licence)
