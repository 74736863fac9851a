"""The photo library: import a folder of openly licensed photos, list what is stored.

A folder holds images plus `photos.csv`: the columns REQUIRED_COLUMNS and OPTIONAL_COLUMNS say,
with what each holds (`refpool photos import --help` prints them from here); any other column is
kept with the photo as extra data.
Each good file is normalised (EXIF orientation applied, RGB, longest side <= MAX_SIDE) and
stored content-addressed under the data dir as `photos/<sha256>.jpg`, with a row in `photos`.
Bad files never abort the batch: each is refused with a reason the user can act on.
"""

from __future__ import annotations

import csv
import io
import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import imagehash
from PIL import Image, ImageOps, UnidentifiedImageError

from refpool.core.contracts import OPEN_LICENCES, Photo
from refpool.core.errors import InputError, MissingFile, RefpoolError
from refpool.core.store import Store, sha256_bytes
from refpool.core.store.photos import get_photo

MAX_SIDE = 1600  # larger photos are downscaled; the painting is 600 px anyway
MIN_SIDE = 128  # below this there is too little to analyse
NEAR_DUPLICATE_BITS = 6  # phash Hamming distance at or below which two photos are "the same"
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".bmp", ".gif"}
LICENCE_NAMES = ", ".join(OPEN_LICENCES)  # CC0, CC-BY, CC-BY-SA, PD
# The columns of photos.csv and what each holds; a header row names them, in any order and case.
REQUIRED_COLUMNS = {
    "file": "the image's file name, a plain name inside the folder"
    f" ({', '.join(sorted(s.lstrip('.') for s in IMAGE_SUFFIXES))})",
    "source": "where the photo was found: its page's URL; words after the URL, such as"
    " (via Wikimedia Commons), are kept as a note",
    "author": "who to credit: open licences require attribution",
    "license": f"one of {LICENCE_NAMES} in any usual spelling, e.g. CC BY 2.0, cc-by-sa,"
    " Attribution 4.0, CC0 1.0, Public Domain or a creativecommons.org URL (the version is"
    " kept); NC, ND and all-rights-reserved licences are refused",
}
OPTIONAL_COLUMNS = {
    "notes": "free text stored with the photo",
    "subject": "what the photo shows, e.g. dahlia (default: the file name up to its first"
    " _, -, . or space, in lower case)",
}
# As messages and the one-line help write them: file,source,author,license[,notes,subject]
COLUMNS_LINE = f"{','.join(REQUIRED_COLUMNS)}[,{','.join(OPTIONAL_COLUMNS)}]"


@dataclass
class ImportReport:
    imported: list[Photo] = field(default_factory=list)
    already: list[tuple[str, int]] = field(default_factory=list)  # (file, existing photo id)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)

    @property
    def ok(self) -> bool:
        return not self.refused

    def summary(self) -> str:
        return (
            f"imported {len(self.imported)}, already in library {len(self.already)},"
            f" refused {len(self.refused)}"
        )


class LicenceError(RefpoolError, ValueError):
    """A licence that is closed, unknown or missing."""


def normalise_licence(text: str) -> tuple[str, str]:
    """Map a licence spelling to (licence, version), e.g. "CC BY 2.0" -> ("CC-BY", "2.0").

    Accepts CC0, CC-BY, CC-BY-SA and public domain in their usual spellings and URLs;
    raises LicenceError for closed (NC, ND, all rights reserved) or unknown licences.
    """
    raw = (text or "").strip()
    if not raw:
        raise LicenceError(f"no licence given; fill the license column ({LICENCE_NAMES})")
    t = raw.lower()
    version_match = re.search(r"(\d+\.\d+)", t)
    version = version_match.group(1) if version_match else ""
    t = re.sub(r"https?://creativecommons\.org/(licenses|publicdomain)/", "cc-", t)
    words = re.sub(r"[^a-z0-9]+", " ", t).split()
    joined = " ".join(words)
    if any(w in words for w in ("nc", "nd")) or "noncommercial" in joined or "noderiv" in joined:
        raise LicenceError(f"licence {raw!r} is not open (NC/ND); only {LICENCE_NAMES}")
    if "all rights reserved" in joined or "copyright" in words:
        raise LicenceError(f"licence {raw!r} is closed; only {LICENCE_NAMES}")
    if "cc0" in words or ("cc" in words and "zero" in words):
        return "CC0", version or "1.0"
    if "public domain" in joined or words in (["pd"], ["pdm"]) or "mark" in words:
        return "PD", version
    if "by" in words or "attribution" in words:
        if "sa" in words or "sharealike" in words or "share alike" in joined:
            return "CC-BY-SA", version
        return "CC-BY", version
    raise LicenceError(f"unknown licence {raw!r}; use one of {LICENCE_NAMES}")


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


def _existing(store: Store) -> tuple[dict[str, int], list[tuple[imagehash.ImageHash, int, str]]]:
    by_sha, hashes = {}, []
    for row in store.query("SELECT id, sha256, phash, file_name, extra FROM photos"):
        by_sha[row["sha256"]] = row["id"]
        original = json.loads(row["extra"] or "{}").get("original_sha256")
        if original:
            by_sha[original] = row["id"]
        hashes.append((imagehash.hex_to_hash(row["phash"]), row["id"], row["file_name"]))
    return by_sha, hashes


def import_folder(store: Store, folder: Path | str, progress: bool = False) -> ImportReport:
    """Import every photo listed in folder/photos.csv; never aborts on a bad file.

    Exact duplicates of a photo already in the library are reported in `already` (a rerun is
    harmless); near duplicates and duplicates within the folder are refused with the reason.
    Raises FileNotFoundError / ValueError only when photos.csv itself is missing or malformed.
    """
    folder = Path(folder)
    rows, refused = _read_manifest(folder)
    report = ImportReport(refused=refused)
    listed = {r["file"] for r in rows}
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in IMAGE_SUFFIXES and path.name not in listed:
            report.refused.append((path.name, "not listed in photos.csv (no licence or author)"))
    by_sha, hashes = _existing(store)
    rows_iter = rows
    if progress:
        from tqdm import tqdm

        rows_iter = tqdm(rows, desc="photos", unit="photo")
    for row in rows_iter:
        name = row["file"]
        try:
            outcome = _import_one(store, folder, row, by_sha, hashes)
        except (ValueError, OSError) as exc:
            report.refused.append((name, str(exc)))
            continue
        if isinstance(outcome, int):
            report.already.append((name, outcome))
        else:
            report.imported.append(outcome)
    return report


def _import_one(store, folder, row, by_sha, hashes) -> Photo | int:
    name = row["file"]
    path = folder / name
    if Path(name).name != name:
        raise ValueError("file must be a plain name inside the folder, not a path")
    if not path.is_file():
        raise ValueError("listed in photos.csv but missing from the folder")
    licence, version = normalise_licence(row.get("license", ""))
    author, source, source_note = row.get("author", ""), *_split_source(row.get("source", ""))
    if not author:
        raise ValueError("no author; open licences need attribution (fill the author column)")
    if not source:
        raise ValueError("no source URL; fill the source column so the photo can be traced")
    data = path.read_bytes()
    original_sha = sha256_bytes(data)
    if original_sha in by_sha:
        return _same_or_duplicate(name, by_sha[original_sha], hashes)
    img, original_size = normalise_image(data)
    phash = imagehash.phash(img)
    for other, other_id, other_name in hashes:
        if phash - other <= NEAR_DUPLICATE_BITS:
            raise ValueError(f"near duplicate of photo {other_id} ({other_name})")
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=92)
    blob = buf.getvalue()
    sha = sha256_bytes(blob)
    if sha in by_sha:
        return _same_or_duplicate(name, by_sha[sha], hashes)
    rel = Path("photos") / f"{sha}.jpg"
    dest = store.home / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(blob)
    subject = row.get("subject") or re.split(r"[_\-. ]", Path(name).stem)[0].lower()
    extra = {k: v for k, v in row.items() if k not in {*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS}}
    extra |= {"original_sha256": original_sha, "original_size": list(original_size)}
    if source_note:
        extra["source_note"] = source_note
    photo_id = store.insert(
        "photos",
        {
            "sha256": sha,
            "file_name": name,
            "path": str(rel),
            "licence": licence,
            "licence_version": version,
            "author": author,
            "source_url": source,
            "width": img.size[0],
            "height": img.size[1],
            "phash": str(phash),
            "subject": subject,
            "notes": row.get("notes", ""),
            "extra": extra,
        },
    )
    by_sha[sha] = by_sha[original_sha] = photo_id
    hashes.append((phash, photo_id, name))
    return get_photo(store, photo_id)


def _same_or_duplicate(name: str, photo_id: int, hashes) -> int:
    """The same file imported again is harmless; identical bytes under another name are not."""
    other = next((n for _, pid, n in hashes if pid == photo_id), name)
    if other != name:
        raise ValueError(f"exact duplicate of photo {photo_id} ({other})")
    return photo_id


def _split_source(text: str) -> tuple[str, str]:
    """Split "https://x/y (via z)" into the URL and the note, so credits get a clean URL."""
    match = re.match(r"\s*(https?://\S+)\s*(.*)", text or "", re.S)
    if not match:
        return (text or "").strip(), ""
    return match.group(1), match.group(2).strip()
