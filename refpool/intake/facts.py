"""What one row of photos.csv says about a photo, read and checked before anything is stored.

The columns (REQUIRED_COLUMNS, OPTIONAL_COLUMNS) and where each stored value comes from
(COLUMN_SOURCES) live here: `photos import --help` and the reference page print them. A fact
is never guessed: a photo without a subject is refused unless the user gave one (`--subject`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from refpool.core.contracts import OPEN_LICENCES, Photo
from refpool.core.errors import RefpoolError

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
    "subject": "what the photo shows, e.g. dahlia: coders are asked to paint it and releases"
    " publish it. A row without one is refused unless --subject gives it; it is never guessed"
    " from the file name",
}
# Where each value the import stores comes from (the reference page's "stored as" column).
COLUMN_SOURCES = {
    "file": "`photos.file_name`; the image itself is normalised (EXIF orientation, RGB, at most"
    " 1600 px) and stored as `photos/<sha256>.jpg`",
    "source": "`photos.source_url` (the URL); the words after it go to `extra.source_note`",
    "author": "`photos.author`, as written",
    "license": "`photos.licence` (CC0, CC-BY, CC-BY-SA or PD) and `photos.licence_version`",
    "notes": "`photos.notes`, as written",
    "subject": "`photos.subject`: this column, else `--subject` (the import says which)",
    "any other": "`photos.extra`, by its column name",
}
# As messages and the one-line help write them: file,source,author,license[,notes,subject]
COLUMNS_LINE = f"{','.join(REQUIRED_COLUMNS)}[,{','.join(OPTIONAL_COLUMNS)}]"
NO_SUBJECT = (
    "no subject: photos.csv gives none for it, and none is guessed; add a subject column (what"
    " the photo shows, e.g. dahlia), or give one subject for every photo without one"
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


def split_source(text: str) -> tuple[str, str]:
    """Split "https://x/y (via z)" into the URL and the note, so credits get a clean URL."""
    match = re.match(r"\s*(https?://\S+)\s*(.*)", text or "", re.S)
    if not match:
        return (text or "").strip(), ""
    return match.group(1), match.group(2).strip()


@dataclass
class RowFacts:
    """Everything the import read or inferred for one photo, before it is stored."""

    file: str
    licence: str
    licence_version: str
    licence_as_written: str
    author: str
    source_url: str
    source_note: str
    subject: str
    subject_from: str  # "the subject column" or "--subject"
    notes: str
    extra: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """What `photos import --dry-run` shows for the photo."""
        version = f" {self.licence_version}" if self.licence_version else ""
        out = [
            f"  subject  {self.subject}  (from {self.subject_from})",
            f"  licence  {self.licence}{version}  (read from {self.licence_as_written!r})",
            f"  author   {self.author}",
            f"  source   {self.source_url}",
        ]
        if self.source_note:
            out.append(f"  note     {self.source_note}  (the words after the source URL)")
        if self.notes:
            out.append(f"  notes    {self.notes}")
        out += [f"  extra    {k} = {v}" for k, v in self.extra.items()]
        return out


def read_facts(row: dict[str, str], subject: str | None = None) -> RowFacts:
    """Read and check one photos.csv row; raises ValueError (LicenceError) with what to fix.
    `subject` (from --subject) stands in only where the row gives none."""
    licence, version = normalise_licence(row.get("license", ""))
    author = row.get("author", "")
    source, note = split_source(row.get("source", ""))
    if not author:
        raise ValueError("no author; open licences need attribution (fill the author column)")
    if not source:
        raise ValueError("no source URL; fill the source column so the photo can be traced")
    given = row.get("subject", "").strip()
    if not given and not (subject or "").strip():
        raise ValueError(NO_SUBJECT)
    known = {*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS}
    return RowFacts(
        file=row["file"],
        licence=licence,
        licence_version=version,
        licence_as_written=row.get("license", ""),
        author=author,
        source_url=source,
        source_note=note,
        subject=given or (subject or "").strip(),
        subject_from="the subject column" if given else "--subject",
        notes=row.get("notes", ""),
        extra={k: v for k, v in row.items() if k not in known},
    )


# The facts a re-import compares with the stored photo: (RowFacts attribute, `photos update`
# option, label).
_COMPARED = (
    ("licence", "--licence", "licence"),
    ("licence_version", "--licence", "licence version"),
    ("author", "--author", "author"),
    ("source_url", "--source-url", "source URL"),
    ("subject", "--subject", "subject"),
)


def differences(facts: RowFacts, photo: Photo) -> list[tuple[str, str, str]]:
    """(label, stored, in photos.csv) for each fact a re-imported row changes."""
    out = []
    for attr, _, label in _COMPARED:
        stored, new = str(getattr(photo, attr) or ""), str(getattr(facts, attr) or "")
        if stored != new:
            out.append((label, stored, new))
    return out


def update_command(photo_id: int, facts: RowFacts, changed: list[tuple[str, str, str]]) -> str:
    """The `refpool photos update` command that applies a re-imported row's changed facts."""
    labels = {label for label, _, _ in changed}
    words = ["refpool", "photos", "update", str(photo_id)]
    if labels & {"licence", "licence version"}:
        version = f" {facts.licence_version}" if facts.licence_version else ""
        words += ["--licence", f"{facts.licence}{version}"]
    for attr, option, label in _COMPARED[2:]:
        if label in labels:
            words += [option, str(getattr(facts, attr))]
    words += ["--reason", "corrected in photos.csv"]
    return shlex.join(words)
