"""The dataset card (README.md) of an exported pool version: YAML metadata for the Hub, then
what the rows are, their licence, counts, how they were made, diversity and attribution."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

import yaml
from datasets import Dataset

from pool.analysis import headline
from pool.catalog import PoolEntry
from pool.provenance import render_info, run_configs
from pool.versions import version_params
from refpool.contracts import Photo, PoolVersion
from refpool.store import Store

COLUMNS = (
    "The published pool's columns (`file_name` is the image, `tier` is a ClassLabel"
    " love/okay; `hpsv3_mu` is null: not computed here) plus the provenance: program"
    " source and sha256, seed, gate profile and violations, renderer library versions,"
    " the critique history across refinement rounds, the curators' ratings, the"
    " candidate id and the row licence."
)
DIVERSITY_NOTE = (
    "Vendi scores are the effective number of distinct images (dHash similarity"
    " and paint-colour histograms); hue entropy is over saturated pixels in 36 bins"
    " (max 5.17 bits)."
)


def dataset_card(
    store: Store,
    pv: PoolVersion,
    entries: list[PoolEntry],
    licence: str,
    ds: Dataset,
    diversity: dict[str, Any] | None,
    shards: list[str],
) -> str:
    lines = [
        "---",
        yaml.safe_dump(
            _metadata(licence, ds, len(entries)), sort_keys=False, allow_unicode=True
        ).strip(),
        "---",
        "",
        *_introduction(pv, len(entries)),
        *_licence(licence, share_alike=any(e.photo.licence == "CC-BY-SA" for e in entries)),
        "",
        "## Columns",
        "",
        COLUMNS,
        "",
        *_counts(entries),
        *_configuration(store, pv, entries, shards),
    ]
    if diversity:
        lines += ["", "## Diversity", "", "| metric | value |", "|---|---|"]
        lines += [f"| {name} | {value} |" for name, value in headline(diversity)]
        lines += ["", DIVERSITY_NOTE]
    lines += _attribution_table(e.photo for e in entries)
    return "\n".join(lines) + "\n"


def _metadata(licence: str, ds: Dataset, n: int) -> dict[str, Any]:
    return {
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


def _introduction(pv: PoolVersion, n: int) -> list[str]:
    tiers = Counter(pv.tiers.values())
    notes = f" Notes: {pv.notes}" if pv.notes else ""
    return [
        f"# refpool reference pool v{pv.version}",
        "",
        f"{n} watercolour paintings made by p5.brush programs, each rated by human curators:"
        f" **{tiers.get('love', 0)} love** and **{tiers.get('okay', 0)} okay**."
        " An RL environment samples references from this pool (2 love + 2 okay per comparison)"
        f' for a pairwise judge, so pin a revision: `revision="v{pv.version}"`.',
        "",
        f"Released {pv.created_at or 'unknown'}.{notes}",
        "",
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("OWNER/NAME", revision="v{pv.version}", split="train")',
        "```",
        "",
    ]


def _licence(licence: str, share_alike: bool) -> list[str]:
    lines = [
        "## Licence",
        "",
        f"The dataset card's licence is `{licence}`, the most restrictive of its rows. **Each row"
        " carries its own licence in the `licence` column**, following from its reference photo.",
    ]
    if share_alike:
        lines += [
            "",
            "Some reference photos are CC BY-SA: the paintings derived from them are"
            " **share-alike (CC BY-SA 4.0)**, and so is any derivative of those rows.",
        ]
    return [
        *lines,
        "",
        "Every painting must credit its reference photo (see the attribution table below"
        " and the `reference_photo_attribution` column).",
    ]


def _counts(entries: list[PoolEntry]) -> list[str]:
    def table(heading: str, values: Iterable[object]) -> list[str]:
        counts = sorted(Counter(values).items(), key=lambda kv: (-kv[1], str(kv[0])))
        rows = "\n".join(f"| {k} | {v} |" for k, v in counts)
        return [f"| {heading} | images |", "|---|---|", rows, ""]

    return [
        "## Counts",
        "",
        *table("model", (e.candidate.generator for e in entries)),
        *table("refinement round", (e.candidate.round for e in entries)),
        *table("reference photo", (e.photo.file_name for e in entries)),
    ]


def _configuration(
    store: Store, pv: PoolVersion, entries: list[PoolEntry], shards: list[str]
) -> list[str]:
    libs = sorted({json.dumps(render_info(store, e.candidate)[0], sort_keys=True) for e in entries})
    run_ids = sorted({e.candidate.run_id for e in entries if e.candidate.run_id is not None})
    lines = [
        "## Generation configuration",
        "",
        f"- renderer and libraries: {', '.join(libs) or 'not recorded'}",
        f"- selection: `{json.dumps(version_params(store, pv.version))}`",
        f"- data files: {', '.join(shards)}",
    ]
    for run in run_configs(store, run_ids):
        lines.append(f"- run {run['run']}: `{json.dumps(run['config'], sort_keys=True)}`")
    return lines


def _attribution_table(photos: Iterable[Photo]) -> list[str]:
    """One row per photo (first seen wins for equal ids), sorted by file name."""
    by_id: dict[int, Photo] = {}
    for photo in photos:
        by_id.setdefault(photo.id, photo)
    lines = ["", "## Reference photo attribution", ""]
    lines += ["| photo | author | licence | source |", "|---|---|---|---|"]
    for p in sorted(by_id.values(), key=lambda p: p.file_name):
        lines.append(f"| {p.file_name} | {p.author} | {p.licence_label} | {p.source_url} |")
    return lines
