"""The photo library: import a folder of openly licensed photos, list what is stored.

A folder holds images plus `photos.csv`: the columns REQUIRED_COLUMNS and OPTIONAL_COLUMNS
(refpool/intake/facts.py) say, with what each holds (`refpool photos import --help` prints them);
any other column is kept with the photo as extra data. Nothing is guessed: a row without a
subject is refused unless the caller gives one, and `dry_run` shows every fact read first.
Each good file is normalised (EXIF orientation applied, RGB, longest side <= MAX_SIDE) and
stored content-addressed under the data dir as `photos/<sha256>.jpg`, with a row in `photos`.
Bad files never abort the batch: each is refused with a reason the user can act on.
"""

from __future__ import annotations

import csv
import io
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import imagehash
from PIL import Image, ImageOps, UnidentifiedImageError

from refpool.core.contracts import Photo
from refpool.core.errors import InputError, MissingFile
from refpool.core.store import Store, photo_corrections, sha256_bytes
from refpool.core.store.photos import get_photo
from refpool.intake import near_duplicates
from refpool.intake.facts import (
    COLUMNS_LINE,
    IMAGE_SUFFIXES,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
    LicenceError,
    RowFacts,
    differences,
    normalise_licence,
    read_facts,
    update_command,
)

__all__ = [
    "COLUMNS_LINE",
    "IMAGE_SUFFIXES",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "ImportReport",
    "LicenceError",
    "import_folder",
    "normalise_image",
    "normalise_licence",
]

MAX_SIDE = 1600  # larger photos are downscaled; the painting is 600 px anyway
MIN_SIDE = 128  # below this there is too little to analyse


@dataclass
class Planned:
    """One photo the import read: its facts, and what was (or, in a dry run, would be) done."""

    file: str
    facts: RowFacts
    outcome: str  # e.g. "import as 640x427", "already #3", "near duplicate of #2 (x.jpg)"


@dataclass
class Changed:
    """A photo already in the library whose row in photos.csv now says something else."""

    file: str
    photo_id: int
    differences: list[tuple[str, str, str]]  # (fact, stored, in photos.csv)
    command: str  # the `refpool photos update` command that applies them

    def line(self) -> str:
        said = "; ".join(f"{label} {old!r} -> {new!r}" for label, old, new in self.differences)
        return f"#{self.photo_id} {self.file}: photos.csv now says {said}. Not applied"


@dataclass
class ImportReport:
    imported: list[Photo] = field(default_factory=list)
    already: list[tuple[str, int]] = field(default_factory=list)  # (file, existing photo id)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    changed: list[Changed] = field(default_factory=list)  # already in, but the row differs
    planned: list[Planned] = field(default_factory=list)  # every row read, in order
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return not self.refused

    def summary(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        count = len([p for p in self.planned if p.outcome.startswith("import")])
        changed = f", changed since (not applied) {len(self.changed)}" if self.changed else ""
        return (
            f"{verb} {count if self.dry_run else len(self.imported)}, already in library"
            f" {len(self.already)}{changed}, refused {len(self.refused)}"
        )


def normalise_image(data: bytes) -> tuple[Image.Image, tuple[int, int]]:
    """Decode, apply EXIF orientation, flatten to RGB and downscale; returns (image, original size).

    Raises ValueError with a user-facing reason for unreadable or too small images.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img: Image.Image = Image.open(io.BytesIO(data))
            img.draft("RGB", (MAX_SIDE, MAX_SIDE))  # JPEG: decode huge files at reduced scale
            img.load()
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ValueError("not a readable image (corrupt, or not an image format)") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ValueError(f"image is corrupt or truncated ({exc})") from None
    original = img.size
    img = ImageOps.exif_transpose(img)
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        ground = Image.new("RGB", rgba.size, (255, 255, 255))  # alpha -> over white
        ground.paste(rgba, mask=rgba.getchannel("A"))
        img = ground
    elif img.mode != "RGB":
        img = img.convert("RGB")  # CMYK, L, P, I;16 ...
    if min(img.size) < MIN_SIDE:
        raise ValueError(
            f"too small ({img.size[0]}x{img.size[1]} px); the shorter side must be at least"
            f" {MIN_SIDE} px"
        )
    if max(img.size) > MAX_SIDE:
        img.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    return img, original


def manifest_has_subjects(folder: Path | str) -> bool:
    """Whether every row of folder/photos.csv names its subject (so --subject is not needed)."""
    rows, _ = _read_manifest(Path(folder))
    return all(r.get("subject") for r in rows)


def _read_manifest(folder: Path) -> tuple[list[dict[str, str]], list[tuple[str, str]]]:
    csv_path = folder / "photos.csv"
    if not folder.is_dir():
        raise MissingFile(f"no folder {folder}; give a folder holding the images and photos.csv")
    if not csv_path.is_file():
        raise MissingFile(
            f"{csv_path} not found; a photo folder needs photos.csv with the columns"
            f" {','.join(REQUIRED_COLUMNS)} (and optionally {', '.join(OPTIONAL_COLUMNS)})"
        )
    with csv_path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        columns = [c.strip().lower() for c in reader.fieldnames or []]
        missing = [c for c in REQUIRED_COLUMNS if c not in columns]
        if missing:
            raise InputError(
                f"{csv_path}: missing column(s) {', '.join(missing)}; the header row needs"
                f" {','.join(REQUIRED_COLUMNS)} (and optionally {', '.join(OPTIONAL_COLUMNS)})"
            )
        rows, refused = [], []
        for n, row in enumerate(reader, start=2):
            clean = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
            if not clean.get("file"):
                refused.append((f"photos.csv line {n}", "row has no file name"))
                continue
            rows.append(clean)
    return rows, refused


# One library photo as the near-duplicate check compares it: (hashes, photo id, file name).
Known = tuple[near_duplicates.PhotoHashes, int, str]


def _existing(store: Store) -> tuple[dict[str, int], list[Known]]:
    """sha256 (stored and original) -> photo id, and every photo's near-duplicate hashes;
    hashes missing (a photo imported before m015) are computed from its file and kept."""
    by_sha: dict[str, int] = {}
    for row in store.query("SELECT id, sha256, extra FROM photos"):
        by_sha[row["sha256"]] = row["id"]
        original = json.loads(row["extra"] or "{}").get("original_sha256")
        if original:
            by_sha[original] = row["id"]
    known: list[Known] = []
    for photo_id, name, text in photo_corrections.near_hashes(store):
        if text is None:
            with Image.open(store.home / get_photo(store, photo_id).path) as img:
                hashes = near_duplicates.photo_hashes(img.convert("RGB"))
            photo_corrections.save_near_hashes(store, photo_id, hashes.to_text())
        else:
            hashes = near_duplicates.PhotoHashes.from_text(text)
        known.append((hashes, photo_id, name))
    return by_sha, known


def import_folder(
    store: Store,
    folder: Path | str,
    progress: bool = False,
    subject: str | None = None,
    dry_run: bool = False,
) -> ImportReport:
    """Import every photo listed in folder/photos.csv; never aborts on a bad file.

    `subject` stands in for photos whose row names none (a row without either is refused: a
    subject is never guessed). Exact duplicates of a photo already in the library are reported
    in `already` (a rerun is harmless), and in `changed` too when their row now says something
    else (with the `photos update` command that applies it); near duplicates and duplicates
    within the folder are refused with the reason. `dry_run`: read and check everything, store
    nothing; `planned` says what each row would give.
    Raises FileNotFoundError / ValueError only when photos.csv itself is missing or malformed.
    """
    folder = Path(folder)
    rows, refused = _read_manifest(folder)
    report = ImportReport(refused=refused, dry_run=dry_run)
    listed = {r["file"] for r in rows}
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in IMAGE_SUFFIXES and path.name not in listed:
            report.refused.append((path.name, "not listed in photos.csv (no licence or author)"))
    by_sha, known = _existing(store)
    rows_iter = rows
    if progress:
        from tqdm import tqdm

        rows_iter = tqdm(rows, desc="photos", unit="photo")
    for row in rows_iter:
        name = row["file"]
        try:
            facts = read_facts(row, subject)
            outcome = _import_one(store, folder, facts, by_sha, known, report, dry_run)
        except (ValueError, OSError) as exc:
            report.refused.append((name, str(exc)))
            continue
        if isinstance(outcome, int):
            report.already.append((name, outcome))
        elif isinstance(outcome, Photo):
            report.imported.append(outcome)
    return report


def _import_one(
    store: Store,
    folder: Path,
    facts: RowFacts,
    by_sha: dict[str, int],
    known: list[Known],
    report: ImportReport,
    dry_run: bool,
) -> Photo | int | None:
    """The stored photo, the id of the same photo already stored, or None in a dry run."""
    name = facts.file
    path = folder / name
    if Path(name).name != name:
        raise ValueError("file must be a plain name inside the folder, not a path")
    if not path.is_file():
        raise ValueError("listed in photos.csv but missing from the folder")
    data = path.read_bytes()
    original_sha = sha256_bytes(data)
    if original_sha in by_sha:
        return _already(store, facts, by_sha[original_sha], known, report)
    img, original_size = normalise_image(data)
    hashes = near_duplicates.photo_hashes(img)
    near = near_duplicates.near_duplicate(hashes, known)
    if near is not None:
        bits, other_id, other_name = near
        raise ValueError(
            f"near duplicate of photo {other_id} ({other_name}): {bits} bits apart, and at most"
            f" {near_duplicates.NEAR_DUPLICATE_BITS} is the same picture (a resized,"
            " recompressed or cropped copy); the library keeps one copy of each picture"
        )
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=92)
    blob = buf.getvalue()
    sha = sha256_bytes(blob)
    if sha in by_sha:
        return _already(store, facts, by_sha[sha], known, report)
    size = f"{original_size[0]}x{original_size[1]}"
    stored = f"{img.size[0]}x{img.size[1]}"
    resized = f" (stored at {stored})" if stored != size else ""
    report.planned.append(Planned(name, facts, f"import: {size} px{resized}"))
    if dry_run:
        stand_in = -len(report.planned)  # no id yet: later rows are checked against it all the same
        known.append((hashes, stand_in, name))
        by_sha[sha] = by_sha[original_sha] = stand_in
        return None
    rel = Path("photos") / f"{sha}.jpg"
    dest = store.home / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(blob)
    extra: dict[str, object] = dict(facts.extra)
    extra |= {"original_sha256": original_sha, "original_size": list(original_size)}
    if facts.source_note:
        extra["source_note"] = facts.source_note
    photo_id = store.insert(
        "photos",
        {
            "sha256": sha,
            "file_name": name,
            "path": str(rel),
            "licence": facts.licence,
            "licence_version": facts.licence_version,
            "author": facts.author,
            "source_url": facts.source_url,
            "width": img.size[0],
            "height": img.size[1],
            "phash": str(imagehash.phash(img)),
            "subject": facts.subject,
            "notes": facts.notes,
            "extra": extra,
            "near_hashes": hashes.to_text(),
        },
    )
    by_sha[sha] = by_sha[original_sha] = photo_id
    known.append((hashes, photo_id, name))
    return get_photo(store, photo_id)


def _already(
    store: Store, facts: RowFacts, photo_id: int, known: list[Known], report: ImportReport
) -> int:
    """The same file imported again is harmless (a changed row is reported, not applied);
    identical bytes under another name are an exact duplicate, refused."""
    name = facts.file
    other = next((n for _, pid, n in known if pid == photo_id), name)
    if other != name:
        where = "a photo earlier in photos.csv" if photo_id < 0 else f"photo {photo_id}"
        raise ValueError(f"exact duplicate of {where} ({other})")
    if photo_id < 0:  # a dry run's earlier row: nothing stored to compare with
        return photo_id
    photo = get_photo(store, photo_id)
    changed = differences(facts, photo)
    outcome = f"already #{photo_id}"
    if changed:
        report.changed.append(
            Changed(name, photo_id, changed, update_command(photo_id, facts, changed))
        )
        outcome += ", with changed facts (not applied)"
    report.planned.append(Planned(name, facts, outcome))
    return photo_id
