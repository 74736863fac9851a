"""Export a pool version in the Hugging Face Hub layout.

    DIR/README.md                               dataset card (YAML metadata + attribution)
    DIR/data/train-00000-of-0000N.parquet       rows with the PNG bytes embedded (datasets Image)

Columns are a superset of the published pool's (DESIGN.md section 7). The licence of each row
follows from its photo: a CC-BY-SA photo makes its painting share-alike; the card's licence
is the most restrictive one present. A row whose photo lacks an open licence or attribution
stops the export: it can never reach a dataset.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import datasets.utils as datasets_progress
import yaml
from datasets import ClassLabel, Dataset, Features, Image, List, Value
from tqdm import tqdm

from pool.analysis import analyse, headline
from pool.catalog import PoolItem, load_items
from pool.versions import get_version, version_params
from refpool.contracts import PoolVersion
from refpool.store import Store

TIER_NAMES = ["love", "okay"]
MAX_SHARD_BYTES = 256 * 1024 * 1024
# Output licence per photo licence: derivatives of BY-SA must stay BY-SA; BY needs credit.
ROW_LICENCE = {"CC-BY-SA": "cc-by-sa-4.0", "CC-BY": "cc-by-4.0", "CC0": "cc0-1.0", "PD": "cc0-1.0"}
LICENCE_RANK = ["cc0-1.0", "cc-by-4.0", "cc-by-sa-4.0"]
_SECRETISH = re.compile(r"key|token|secret|password|authorization", re.IGNORECASE)

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


def _scrub(config: object) -> object:
    """Drop anything that looks like a credential from a run config before it is published."""
    if isinstance(config, dict):
        return {k: _scrub(v) for k, v in config.items() if not _SECRETISH.search(str(k))}
    if isinstance(config, list):
        return [_scrub(v) for v in config]
    return config


def _attribution(item: PoolItem) -> str:
    return f"{item.photo_file_name} by {item.photo_author}, {item.photo_licence_label}, {item.photo_url}"


def _critique_history(store: Store, item: PoolItem) -> list[dict]:
    chain, cid, seen = [], item.candidate_id, set()
    while cid is not None and cid not in seen:
        seen.add(cid)
        rows = store.query(
            "SELECT id, round, generator, parent_id, accepted, critique, violations"
            " FROM candidates WHERE id = ?",
            (cid,),
        )
        if not rows:
            break
        r = rows[0]
        chain.append({
            "candidate_id": r["id"], "round": r["round"], "generator": r["generator"],
            "accepted": bool(r["accepted"]),
            "gate_codes": sorted({v.get("code") for v in json.loads(r["violations"] or "[]")}),
            "critique": json.loads(r["critique"]) if r["critique"] else None,
        })  # fmt: skip
        cid = r["parent_id"]
    return chain[::-1]


def _render_info(store: Store, item: PoolItem) -> tuple[dict, str]:
    rows = []
    if item.render_id is not None:
        rows = store.query(
            "SELECT lib_versions, profile FROM renders WHERE id = ?", (item.render_id,)
        )
    if not rows and item.png_sha:
        rows = store.query(
            "SELECT lib_versions, profile FROM renders WHERE png_sha = ? ORDER BY id DESC LIMIT 1",
            (item.png_sha,),
        )
    if not rows:
        return {}, "reference"
    return json.loads(rows[0]["lib_versions"] or "{}"), rows[0]["profile"]


def check_exportable(items: dict[int, PoolItem], tiers: dict[int, str]) -> None:
    """Refuse (naming every offender) rather than publish an unlicensed or unrated image."""
    problems = []
    for cid, tier in sorted(tiers.items()):
        item = items.get(cid)
        if item is None:
            problems.append(f"candidate {cid} is not in the store")
        elif not item.licence_ok:
            problems.append(f"candidate {cid}: photo {item.photo_file_name} has licence"
                            f" {item.photo_licence!r}, not an open licence")  # fmt: skip
        elif not item.attribution_ok:
            problems.append(
                f"candidate {cid}: photo {item.photo_file_name} lacks author or source URL"
            )
        elif tier not in TIER_NAMES:
            problems.append(f"candidate {cid}: tier {tier!r} cannot be exported")
        elif not item.png_sha:
            problems.append(f"candidate {cid} has no image")
    if problems:
        raise ExportError(
            "cannot export: " + "; ".join(problems[:10])
            + (f" (+{len(problems) - 10} more)" if len(problems) > 10 else "")
            + ". Fix the photo records or release a version without these candidates."
        )  # fmt: skip


def build_rows(
    store: Store, pv: PoolVersion, progress: bool = True
) -> tuple[dict[str, list], list[PoolItem]]:
    tiers = {int(k): v for k, v in pv.tiers.items()}
    items = load_items(store, tiers)
    check_exportable(items, tiers)
    cols: dict[str, list] = {name: [] for name in FEATURES}
    ordered = [items[c] for c in sorted(tiers)]
    for item in tqdm(
        ordered, desc="export rows", unit="row", file=sys.stderr, disable=not progress
    ):
        path = store.png_path(item.png_sha)
        if not path.exists():
            raise ExportError(
                f"candidate {item.candidate_id}: PNG {path} is missing; restore it or re-render"
            )
        libs, profile = _render_info(store, item)
        source = store.program_source(item.program_sha) if item.program_sha else ""
        values = {
            "file_name": {"bytes": path.read_bytes(), "path": f"{item.candidate_id:06d}.png"},
            "source_file": f"programs/{item.candidate_id:06d}.js",
            "tier": tiers[item.candidate_id],
            "subject": item.subject,
            "generator_model": item.generator,
            "refinement_round": item.round,
            "hpsv3_mu": None,  # not computed here; kept for the published schema
            "paint_coverage": item.coverage,
            "gate_errors": len(item.violations),
            "reference_photo": item.photo_file_name,
            "reference_photo_licence": item.photo_licence_label,
            "reference_photo_attribution": _attribution(item),
            "reference_photo_url": item.photo_url,
            "licence": ROW_LICENCE[item.photo_licence],
            "candidate_id": item.candidate_id,
            "parent_id": item.parent_id,
            "program_source": source,
            "program_sha256": item.program_sha or "",
            "image_sha256": item.png_sha,
            "seed": item.seed,
            "gate_profile": profile,
            "gate_violations": json.dumps(item.violations),
            "renderer_versions": json.dumps(libs, sort_keys=True),
            "critique_history": json.dumps(_critique_history(store, item)),
            "curator_ratings": [{"curator": c, "tier": t} for c, t in sorted(item.votes.items())],
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
    cols, items = build_rows(store, pv, progress=progress)
    out = Path(out_dir)
    data_dir = out / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob("train-*.parquet"):  # shards of an earlier export
        old.unlink()
    ds = Dataset.from_dict(cols, features=FEATURES)
    total = sum(len(c["bytes"]) for c in cols["file_name"])
    shards = max(1, math.ceil(total / max_shard_bytes))
    files = []
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
    licence = max((ROW_LICENCE[i.photo_licence] for i in items), key=LICENCE_RANK.index)
    diversity = (
        analyse(store, {int(k): v for k, v in pv.tiers.items()}, pv.version).metrics
        if with_diversity
        else None
    )
    card = dataset_card(store, pv, items, licence, ds, diversity, files)
    (out / "README.md").write_text(card, "utf-8")
    files.append("README.md")
    sized = [(rel, (out / rel).stat().st_size) for rel in sorted(files)]
    return ExportResult(out, pv.version, len(items), sized, licence)


def dataset_card(
    store: Store, pv: PoolVersion, items: list[PoolItem], licence: str, ds: Dataset,
    diversity: dict | None, shards: list[str],
) -> str:  # fmt: skip
    tiers = Counter(pv.tiers.values())
    n = len(items)
    meta = {
        "license": licence,
        "pretty_name": "refpool reference paintings",
        "tags": ["p5.js", "p5.brush", "watercolour", "reference-pool", "generative-art"],
        "size_categories": ["n<1K" if n < 1000 else "1K<n<10K"],
        "configs": [
            {"config_name": "default", "data_files": [{"split": "train", "path": "data/*.parquet"}]}
        ],
        "dataset_info": {
            "features": ds.features._to_yaml_list(),
            "splits": [{"name": "train", "num_bytes": int(ds.data.nbytes), "num_examples": n}],
        },
    }
    share_alike = any(i.photo_licence == "CC-BY-SA" for i in items)
    photos: dict[int, PoolItem] = {}
    for i in items:
        photos.setdefault(i.photo_id, i)
    libs = sorted({json.dumps(_render_info(store, i)[0], sort_keys=True) for i in items})
    run_ids = sorted({i.run_id for i in items if i.run_id is not None})
    runs = []
    for rid in run_ids:
        rows = store.query("SELECT config FROM runs WHERE id = ?", (rid,))
        if rows:
            runs.append({"run": rid, "config": _scrub(json.loads(rows[0]["config"]))})

    def table(counter: Counter) -> str:
        return "\n".join(
            f"| {k} | {v} |"
            for k, v in sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))
        )

    lines = [
        "---", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip(), "---", "",
        f"# refpool reference pool v{pv.version}", "",
        f"{n} watercolour paintings made by p5.brush programs, each rated by human curators:"
        f" **{tiers.get('love', 0)} love** and **{tiers.get('okay', 0)} okay**."
        " An RL environment samples references from this pool (2 love + 2 okay per comparison)"
        " for a pairwise judge, so pin a revision: `revision=\"v" + pv.version + "\"`.", "",
        f"Released {pv.created_at or 'unknown'}." + (f" Notes: {pv.notes}" if pv.notes else ""), "",
        "```python", "from datasets import load_dataset",
        f'ds = load_dataset("OWNER/NAME", revision="v{pv.version}", split="train")', "```", "",
        "## Licence", "",
        f"The dataset card's licence is `{licence}`, the most restrictive of its rows. **Each row"
        " carries its own licence in the `licence` column**, following from its reference photo.",
    ]  # fmt: skip
    if share_alike:
        lines += ["", "Some reference photos are CC BY-SA: the paintings derived from them are"
                  " **share-alike (CC BY-SA 4.0)**, and so is any derivative of those rows."]  # fmt: skip
    lines += ["", "Every painting must credit its reference photo (see the attribution table below"
              " and the `reference_photo_attribution` column).", "",
              "## Columns", "",
              "The published pool's columns (`file_name` is the image, `tier` is a ClassLabel"
              " love/okay; `hpsv3_mu` is null: not computed here) plus the provenance: program"
              " source and sha256, seed, gate profile and violations, renderer library versions,"
              " the critique history across refinement rounds, the curators' ratings, the"
              " candidate id and the row licence.", "",
              "## Counts", "", "| model | images |", "|---|---|",
              table(Counter(i.generator for i in items)), "",
              "| refinement round | images |", "|---|---|", table(Counter(i.round for i in items)), "",
              "| reference photo | images |", "|---|---|", table(Counter(i.photo_file_name for i in items)), "",
              "## Generation configuration", "",
              f"- renderer and libraries: {', '.join(libs) or 'not recorded'}",
              f"- selection: `{json.dumps(version_params(store, pv.version))}`",
              f"- data files: {', '.join(shards)}"]  # fmt: skip
    for run in runs:
        lines.append(f"- run {run['run']}: `{json.dumps(run['config'], sort_keys=True)}`")
    if diversity:
        lines += ["", "## Diversity", "", "| metric | value |", "|---|---|"]
        lines += [f"| {name} | {value} |" for name, value in headline(diversity)]
        lines += ["", "Vendi scores are the effective number of distinct images (dHash similarity"
                  " and paint-colour histograms); hue entropy is over saturated pixels in 36 bins"
                  " (max 5.17 bits)."]  # fmt: skip
    lines += ["", "## Reference photo attribution", "",
              "| photo | author | licence | source |", "|---|---|---|---|"]  # fmt: skip
    for p in sorted(photos.values(), key=lambda i: i.photo_file_name):
        lines.append(
            f"| {p.photo_file_name} | {p.photo_author} | {p.photo_licence_label} | {p.photo_url} |"
        )
    return "\n".join(lines) + "\n"
