"""The dataset card (README.md) of an exported release: YAML metadata for the Hub (licence,
task categories, the imagefolder config), then how to load it pinned, what the rows are,
their licences, counts, how they were made, diversity and attribution."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

import yaml

from pool.catalog import PoolEntry
from pool.dataset.card_reward import reward_card_lines
from pool.dataset.provenance import (
    ROW_LICENCE,
    ROW_LICENCE_NAME,
    ROW_LICENCE_URL,
    endpoint_model,
    photo_licence_name,
    photo_licence_url,
    render_info,
    run_configs,
)
from pool.dataset.training_card import training_card_lines, training_configs
from pool.dataset.training_sets import TrainingSets
from pool.diversity.analysis import headline
from pool.diversity.records import Metrics
from pool.selection.versions import version_params
from refpool.core.contracts import PoolVersion
from refpool.core.store import Store

PLACEHOLDER_REPO = "OWNER/NAME"
COLUMNS = (
    "`metadata.jsonl` holds one row per image. The published pool's columns come first:"
    " `file_name` (the PNG's path, `images/<tier>_<id>.png`; `datasets` loads it as the"
    " `image` column), `source_file` (`sources/<tier>_<id>.js`), `tier` (the string `love`, `okay`"
    " or `rung`, also the file-name prefix), `subject`, `generator_model` (the model id the"
    " endpoint was asked for), `refinement_round`,"
    " `hpsv3_mu`, `paint_coverage`, `gate_errors` and `reference_photo*`. Then the provenance:"
    " the photo's licence version and URL, the row's `licence`, `licence_url` and"
    " `attribution`, the candidate and parent ids, the program source and sha256, the image"
    " sha256, seed, gate profile and violations, renderer library versions, the critique"
    " history across refinement rounds (JSON), the curators' ratings, `hpsv3_sigma`, the"
    " pool version, `served_model` (the model id the server said wrote the program: a"
    " router's fallback makes it differ from `generator_model`) and `generator_name` (the"
    " generator's name in the models file)."
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
    diversity: Metrics | None,
    repo_id: str | None = None,
    scorer: str | None = None,
    pseudonymised: bool = False,
    training: TrainingSets | None = None,
) -> str:
    curators = (
        "Curator names in `curator_ratings` are pseudonyms (`curator-` and 8 hex digits),"
        " the same for a curator in every version of this pool."
        if pseudonymised
        else ""
    )
    lines = [
        "---",
        yaml.safe_dump(_metadata(licence, len(entries), training), sort_keys=False).strip(),
        "---",
        "",
        *_introduction(pv, len(entries)),
        *_loading(pv, repo_id),
        *_licence(licence, entries),
        "",
        "## Columns",
        "",
        " ".join(filter(None, (COLUMNS, curators))),
        "",
        _preference_note(scorer),
        *reward_card_lines(store, entries),
        "",
        *training_card_lines(training, repo_id or PLACEHOLDER_REPO, f"v{pv.version}"),
        *_counts(store, entries),
        *_configuration(store, pv, entries),
    ]
    if diversity:
        lines += ["", "## Diversity", "", "| metric | value |", "|---|---|"]
        lines += [f"| {name} | {value} |" for name, value in headline(diversity)]
        lines += ["", DIVERSITY_NOTE]
    lines += _attribution_table(entries)
    return "\n".join(lines) + "\n"


def _metadata(licence: str, n: int, training: TrainingSets | None = None) -> dict[str, Any]:
    return {
        "license": licence,
        "pretty_name": "refpool reference paintings",
        "task_categories": ["text-to-image", "image-classification"],
        "tags": ["p5.js", "p5.brush", "watercolour", "reference-pool", "generative-art"],
        "size_categories": ["n<1K" if n < 1000 else "1K<n<10K" if n < 10000 else "10K<n<100K"],
        # One source of truth: the imagefolder metadata that the environment also reads.
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": "train", "path": ["metadata.jsonl", "images/*.png"]}],
            },
            # The training sets come after it: `datasets` reads every config with the loader
            # the first one needs (pool/dataset/training_card.py).
            *training_configs(training),
        ],
    }


def _introduction(pv: PoolVersion, n: int) -> list[str]:
    tiers = Counter(pv.tiers.values())
    notes = f" Notes: {pv.notes}" if pv.notes else ""
    rung = (
        f" and **{tiers['rung']} rung** (calibrated to a policy's win rate, not rated)"
        if tiers.get("rung")
        else ""
    )
    return [
        f"# refpool reference pool v{pv.version}",
        "",
        f"{n} watercolour paintings made by p5.brush programs, each rated by human curators:"
        f" **{tiers.get('love', 0)} love** and **{tiers.get('okay', 0)} okay**{rung}."
        " An RL environment samples references from this pool (2 love + 2 okay per comparison)"
        " for a pairwise judge. What the pool holds is part of the reward, so always pin a"
        " revision.",
        "",
        f"Released {pv.created_at or 'unknown'}.{notes}",
        "",
    ]


def _loading(pv: PoolVersion, repo_id: str | None) -> list[str]:
    repo = repo_id or PLACEHOLDER_REPO
    tag = f"v{pv.version}"
    lines = [
        "## Loading a pinned revision",
        "",
        "`images/<tier>_<id>.png` are the paintings (the file-name prefix is the tier),"
        " `sources/<tier>_<id>.js` the program of each, `metadata.jsonl` the rows and"
        " `photo_attribution.json` the photo credits. The RL environment downloads them"
        " directly:",
        "",
        "```python",
        "from huggingface_hub import snapshot_download",
        f'path = snapshot_download("{repo}", repo_type="dataset", revision="{tag}",',
        '                         allow_patterns=["images/*", "sources/*", "metadata.jsonl"])',
        "```",
        "",
        "The same files load as a dataset (the `image` column, `tier` a string):",
        "",
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("{repo}", revision="{tag}", split="train")',
        "```",
        "",
        f"**Pin a revision.** The tag `{tag}` names this release. A tag can in principle be"
        " moved, a commit cannot: for a reward that must never change, pin the commit SHA the"
        f' tag points to (`git ls-remote` or `HfApi().list_repo_refs("{repo}",'
        ' repo_type="dataset")`). The watercolour environment reads it from'
        " `WATERCOLOUR_POOL_REVISION` (and the repo from `WATERCOLOUR_POOL_DATASET`).",
        "",
    ]
    if repo_id is None:
        lines += [f"Replace `{PLACEHOLDER_REPO}` with the repo this folder is published to.", ""]
    return lines


def _licence(licence: str, entries: list[PoolEntry]) -> list[str]:
    used = sorted({ROW_LICENCE[e.photo.licence] for e in entries})
    lines = [
        "## Licence",
        "",
        f"The card's licence is `{licence}`, the most restrictive of its rows. **Each row carries"
        " its own licence** (`licence`, spelled `cc-by`, `cc-by-sa` or `cc0`, with `licence_url`)"
        " and its credit (`attribution`). Every painting is a derived work, **adapted from** its"
        " reference photo, and follows that photo's licence:",
        "",
        "| row licence | meaning | images |",
        "|---|---|---|",
    ]
    counts = Counter(ROW_LICENCE[e.photo.licence] for e in entries)
    for code in used:
        lines.append(
            f"| `{code}` | [{ROW_LICENCE_NAME[code]}]({ROW_LICENCE_URL[code]}) | {counts[code]} |"
        )
    if "cc-by-sa" in used:
        lines += [
            "",
            "Some reference photos are CC BY-SA: the paintings adapted from them are"
            " **share-alike (CC BY-SA 4.0)**, and so is any derivative of those rows.",
        ]
    return [
        *lines,
        "",
        "Credit each painting as its `attribution` column does (see the table below).",
    ]


def _preference_note(scorer: str | None) -> str:
    if scorer:
        return f"`hpsv3_mu` is the preference score from `{scorer}`."
    return (
        "`hpsv3_mu` is null in every row: no preference scorer was configured when this"
        " release was exported."
    )


def _counts(store: Store, entries: list[PoolEntry]) -> list[str]:
    def table(heading: str, values: Iterable[object]) -> list[str]:
        counts = sorted(Counter(values).items(), key=lambda kv: (-kv[1], str(kv[0])))
        rows = "\n".join(f"| {k} | {v} |" for k, v in counts)
        return [f"| {heading} | images |", "|---|---|", rows, ""]

    return [
        "## Counts",
        "",
        *table(
            "model (models-file name)",
            (_model_and_name(store, e) for e in entries),
        ),
        *table("refinement round", (e.candidate.round for e in entries)),
        *table("reference photo", (e.photo.file_name for e in entries)),
    ]


def _model_and_name(store: Store, entry: PoolEntry) -> str:
    model, name = endpoint_model(store, entry.candidate), entry.candidate.generator
    return model if model == name else f"{model} ({name})"


def _configuration(store: Store, pv: PoolVersion, entries: list[PoolEntry]) -> list[str]:
    libs = sorted({json.dumps(render_info(store, e.candidate)[0], sort_keys=True) for e in entries})
    run_ids = sorted({e.candidate.run_id for e in entries if e.candidate.run_id is not None})
    lines = [
        "## Generation configuration",
        "",
        f"- renderer and libraries: {', '.join(libs) or 'not recorded'}",
        f"- selection: `{json.dumps(version_params(store, pv.version))}`",
    ]
    for run in run_configs(store, run_ids):
        lines.append(f"- run {run['run']}: `{json.dumps(run['config'], sort_keys=True)}`")
    return lines


def _attribution_table(entries: list[PoolEntry]) -> list[str]:
    """One row per photo, sorted by file name: the paintings adapted from it and their licence."""
    by_photo: dict[int, list[PoolEntry]] = {}
    for e in entries:
        by_photo.setdefault(e.photo.id, []).append(e)
    lines = ["", "## Reference photo attribution", ""]
    lines += [
        "| photo | author | photo licence | source | paintings adapted from it | their licence |",
        "|---|---|---|---|---|---|",
    ]
    for group in sorted(by_photo.values(), key=lambda g: g[0].photo.file_name):
        p = group[0].photo
        row = ROW_LICENCE[p.licence]
        lines.append(
            f"| {p.file_name} | {p.author} | [{photo_licence_name(p)}]({photo_licence_url(p)})"
            f" | {p.source_url} | {len(group)} | [{ROW_LICENCE_NAME[row]}]({ROW_LICENCE_URL[row]}) |"
        )
    return lines
