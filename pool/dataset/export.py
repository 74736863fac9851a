"""Export a pool version as a release: the layout the RL environment downloads, which is also
an imagefolder dataset that `datasets.load_dataset` and the Hub viewer read.

    DIR/images/<tier>_<id>.png     the paintings; the file-name prefix is the tier (love_, okay_)
    DIR/sources/<tier>_<id>.js     the p5.brush program of each painting, same stem
    DIR/metadata.jsonl             one row per image: `file_name` (a string path, images/...),
                                   `tier` (a string), and every provenance column
    DIR/photo_attribution.json     every reference photo, its licence and who made it
    DIR/README.md                  the dataset card; its config points `datasets` at the above
    DIR/sft.jsonl, ...             the training sets, extra configs (pool/dataset/training_sets.py)

metadata.jsonl is the one source of truth: `datasets` reads it through the card's config, the
environment reads tiers from the file names it lists. Every file was frozen when the version
was released (pool/dataset/release.py): export copies those bytes, one file at a time and
checked against its sha256, so an export made years later is the release, byte for byte.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tqdm import tqdm

from pool.catalog import load_entries
from pool.dataset.provenance import HUB_LICENCE
from pool.dataset.release import LICENCE_RANK, ExportError, Scores, check_exportable, freeze
from pool.dataset.training_sets import CONFIG_FILES
from pool.dataset.withdrawn_card import withdrawn_card
from pool.selection.versions import get_version
from refpool.core.contracts import PoolVersion
from refpool.core.store import Store, release_marks, releases, sha256_bytes
from refpool.core.store.releases import FrozenFile

__all__ = ["ExportError", "ExportResult", "check_exportable", "export_version"]

# What a release consists of; publishing deletes anything else under these from the repo.
RELEASE_DIRS = ("images/", "sources/", "data/", "photos/")  # photos/: shown to training sets
RELEASE_FILES = ("metadata.jsonl", "photo_attribution.json", "README.md", *CONFIG_FILES.values())
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


@dataclass
class ExportResult:
    out_dir: Path
    version: str
    rows: int
    files: list[tuple[str, int]]  # (path relative to out_dir, bytes)
    licence: str  # the Hub identifier of the most restrictive row licence
    frozen: str = ""  # how the version was frozen (releases.Freeze.note)
    notes: list[str] = field(default_factory=list)  # what the caller should know


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
            " the folder's release files, so choose an empty or new folder",
            hint="choose an output folder",
        )


def _clear_release(out: Path) -> None:
    """Remove what an earlier export left in the folder, so it holds exactly this release."""
    for folder in RELEASE_DIRS:
        shutil.rmtree(out / folder, ignore_errors=True)
    for name in RELEASE_FILES:
        (out / name).unlink(missing_ok=True)


def _blob(store: Store, f: FrozenFile) -> Path:
    return store.blob_path(f.kind, f.sha256)


def _check_blobs(store: Store, version: str, files: list[FrozenFile]) -> None:
    """Refuse before touching the folder if any frozen file is missing or altered."""
    bad = []
    for f in files:
        path = _blob(store, f)
        if not path.exists():
            bad.append(f"{f.path} (blob {path} is missing)")
        elif sha256_bytes(path.read_bytes()) != f.sha256:
            bad.append(f"{f.path} (blob {path} does not match its sha256 {f.sha256[:12]})")
    if bad:
        more = f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""
        raise ExportError(
            f"version {version} cannot be exported as released: "
            + "; ".join(bad[:5])
            + more
            + ". Nothing was written and the frozen release is unchanged: restore those blobs"
            " from a backup of the data folder, or copy the same file from an earlier export or"
            " the Hub (each file's sha256 is in the store), then export again."
        )


def _write_frozen(
    store: Store, out: Path, version: str, files: list[FrozenFile], progress: bool
) -> None:
    (out / "images").mkdir(parents=True)
    (out / "sources").mkdir()
    bar = tqdm(files, desc="export", unit="file", file=sys.stderr, disable=not progress)
    for f in bar:
        data = _blob(store, f).read_bytes()
        if sha256_bytes(data) != f.sha256:  # changed since it was checked: stop, say which
            raise ExportError(
                f"{f.path}: blob changed during the export of {version}; export again"
            )
        target = out / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def export_version(
    store: Store,
    out_dir: Path | str,
    version: str | PoolVersion = "latest",
    progress: bool = True,
    with_diversity: bool = True,
    repo_id: str | None = None,
    preference_scores: Scores | None = None,
    scorer: str | None = None,
) -> ExportResult:
    """Write the frozen release of a version into out_dir (replacing an earlier export there).

    A version released before m010 has no frozen files yet: this export freezes it as it
    writes it, using the arguments below, and says so. For any other version they were fixed
    at release: `repo_id` only adds a note when the card names another repo, `with_diversity`
    is ignored, and preference scores are refused (release a new version to change them).
    """
    pv = version if isinstance(version, PoolVersion) else get_version(store, version)
    if not pv.candidate_ids:
        raise ExportError(f"version {pv.version} is empty; nothing to export")
    out = Path(out_dir)
    _check_target(out)
    state = releases.freeze_of(store, pv.version)
    notes = []
    if state is None or not state.frozen:
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        by = f"{releases.PENDING} (as exported on {day})"
        freeze(store, pv, by, with_diversity, repo_id, preference_scores, scorer, progress)
        state = releases.freeze_of(store, pv.version)
        assert state is not None  # freeze() just recorded it
        notes.append(f"{pv.version} was released before releases were frozen: {state.note}")
    else:
        if preference_scores is not None or scorer is not None:
            raise ExportError(
                f"version {pv.version} was frozen at release with its preference scores;"
                " release a new version to publish other scores"
            )
        # The bytes are frozen, but a photo licence withdrawn since still stops them.
        tiers = {int(k): v for k, v in pv.tiers.items()}
        check_exportable(load_entries(store, tiers), tiers)
        if repo_id and repo_id != state.repo_id:
            named = state.repo_id or "the OWNER/NAME placeholder"
            notes.append(
                f"the card of {pv.version} names {named} in its load snippets, as frozen at"
                f" release (not {repo_id}); release a new version for {repo_id} to name it"
            )
    files = releases.files(store, pv.version)
    _check_blobs(store, pv.version, files)
    out.mkdir(parents=True, exist_ok=True)
    _clear_release(out)
    _write_frozen(store, out, pv.version, files, progress)
    rows = releases.rows(store, pv.version)
    worst = max((r.licence for r in rows), key=LICENCE_RANK.index)
    sized = [(f.path, f.size) for f in files]
    if gone := release_marks.withdrawal_of(store, pv.version):
        # Its files stay as frozen; only the card says, first, that it was withdrawn.
        card = out / "README.md"
        card.write_text(withdrawn_card(card.read_text("utf-8"), gone), "utf-8")
        sized = [(p, card.stat().st_size if p == "README.md" else n) for p, n in sized]
        notes.append(f"{pv.version} was withdrawn ({gone.note}): its card says so first")
    return ExportResult(out, pv.version, len(rows), sized, HUB_LICENCE[worst], state.note, notes)
