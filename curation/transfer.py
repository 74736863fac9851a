"""Import and export of ratings: CSV, JSON, and the published tool's format.

Formats
  csv / json   one row per (candidate, curator) live rating:
               candidate_id, curator, tier, note, created_at, generator, round, png_sha
  published    the published experiment's rating file: a JSON object
               {"<file name>": "love" | "okay" | "nope" | "meh"} for ONE curator.

Mapping of the published labels (our decision, documented in docs/how-to/rate-in-the-studio.md):
  love -> love, okay -> okay, nope -> reject,
  meh  -> skip: the published pool held only love/okay, so a "meh" image was left out of it;
          calling it okay would add images its curator left out, calling it reject would
          overstate it. A skip keeps it out of the pool and back in the queue for a second
          look (the original label is kept in the note).
Export to published maps back: reject -> nope, skip -> meh. Without --curator it writes the
final tiers (see curation/ratings.py), so the file is the pool decision.

File names: a candidate is exported as `candidate_<id>.png`; on import a name matches a
candidate by that form, by `<id>.png`, by the dataset's `<id:06d>.png` (pool/dataset/export.py),
or by `<png sha256>.png`.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.ratings import final_tiers, my_latest, record_rating
from refpool.core.contracts import RATING_ACTIONS, RELEASE_TIERS, Candidate, release_stem
from refpool.core.errors import InputError, MissingFile
from refpool.core.store import Store, candidates

FORMATS = ("csv", "json", "published")
FROM_PUBLISHED = {"love": "love", "okay": "okay", "nope": "reject", "meh": "skip"}
TO_PUBLISHED = {"love": "love", "okay": "okay", "reject": "nope", "skip": "meh"}
COLUMNS = ("candidate_id", "curator", "tier", "note", "created_at", "generator", "round", "png_sha")


def published_name(candidate_id: int) -> str:
    return f"candidate_{candidate_id}.png"


def export_rows(store: Store, curator: str | None = None) -> list[dict[str, Any]]:
    """Each curator's live rating per candidate (latest non-undone row), oldest first.

    A rating whose candidate has since been deleted keeps empty generator, round and png_sha.
    """
    sql = "SELECT candidate_id, curator, tier, note, created_at FROM ratings WHERE undone = 0"
    params: tuple[str, ...] = ()
    if curator:
        sql += " AND curator = ?"
        params = (curator,)
    latest: dict[tuple[int, str], dict[str, Any]] = {}
    for row in store.query(sql + " ORDER BY id", params):
        latest[(row["candidate_id"], row["curator"])] = dict(row)
    known = candidates.get_many(store, {cid for cid, _ in latest})
    rows = []
    for rating in latest.values():
        c = known.get(rating["candidate_id"])
        merged = {
            **rating,
            "generator": c.generator if c else None,
            "round": c.round if c else None,
            "png_sha": c.png_sha if c else None,
        }
        rows.append({k: merged[k] for k in COLUMNS})
    return rows


def export_ratings(store: Store, fmt: str = "csv", curator: str | None = None) -> str:
    """The ratings as text in one of FORMATS."""
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(export_rows(store, curator))
        return buf.getvalue()
    if fmt == "json":
        return json.dumps(export_rows(store, curator), indent=2) + "\n"
    if fmt == "published":
        if curator:
            tiers = {r["candidate_id"]: r["tier"] for r in export_rows(store, curator)}
        else:
            tiers = final_tiers(store)
        mapping = {published_name(cid): TO_PUBLISHED[t] for cid, t in sorted(tiers.items())}
        return json.dumps(mapping, indent=2) + "\n"
    raise InputError(f"unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}")


@dataclass
class ImportSummary:
    imported: int = 0
    unchanged: int = 0  # already the curator's live rating: re-importing is idempotent
    unmatched: list[str] = field(default_factory=list)  # names/ids with no candidate
    invalid: list[str] = field(default_factory=list)  # rows we could not read

    def text(self) -> str:
        out = f"imported {self.imported} ratings, {self.unchanged} already present"
        if self.unmatched:
            out += f", {len(self.unmatched)} matched no candidate (e.g. {self.unmatched[:3]})"
        if self.invalid:
            out += f", {len(self.invalid)} invalid rows (e.g. {self.invalid[:3]})"
        return out


def _name_index(known: list[Candidate]) -> dict[str, int]:
    """Every file name a candidate may go by in a ratings file -> its id."""
    index: dict[str, int] = {}
    for c in known:
        index[published_name(c.id)] = c.id
        index[f"{c.id}.png"] = c.id
        index[f"{c.id:06d}.png"] = c.id
        for tier in RELEASE_TIERS:  # a release's own names: images/love_000042.png
            index[f"{release_stem(tier, c.id)}.png"] = c.id
        if c.png_sha:
            index[f"{c.png_sha}.png"] = c.id
    return index


def _parse(path: Path, default_curator: str | None) -> list[dict[str, Any]]:
    """Rows of {candidate_id|file_name, curator, tier, note}, whatever the file's format."""
    text = path.read_text("utf-8-sig")
    if path.suffix.lower() == ".csv":
        return list(csv.DictReader(io.StringIO(text)))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not valid JSON ({exc}); expected a .csv or .json ratings file"
        ) from exc
    if isinstance(data, dict):
        if not default_curator:
            raise InputError(
                f"{path} is in the published format (file name -> label), which names no"
                " curator: say which curator the ratings belong to",
                hint="name a curator",
            )
        rows = []
        for name, label in data.items():
            tier = FROM_PUBLISHED.get(str(label).strip().lower())
            rows.append(
                {
                    "file_name": Path(str(name)).name,
                    "tier": tier or str(label),
                    "note": f"published: {label}" if label == "meh" else "",
                }
            )
        return rows
    if isinstance(data, list):
        return data
    raise InputError(f"{path}: expected a JSON list of ratings or a published mapping")


def import_ratings(store: Store, path: Path | str, curator: str | None = None) -> ImportSummary:
    """Append ratings from a file (source='import'). `curator` overrides/sets the curator."""
    path = Path(path)
    if not path.exists():
        raise MissingFile(f"no ratings file at {path}")
    rows = _parse(path, curator)
    summary = ImportSummary()
    known = candidates.list_candidates(store)
    names = _name_index(known)
    existing = {c.id for c in known}
    live: dict[str, dict[int, str]] = {}
    for n, row in enumerate(rows, start=1):
        who = (curator or str(row.get("curator") or "")).strip()
        tier = str(row.get("tier") or "").strip().lower()
        if "file_name" in row and not row.get("candidate_id"):
            cid = names.get(str(row["file_name"]).rsplit("/", 1)[-1])  # images/… or bare
            if cid is None:
                summary.unmatched.append(str(row["file_name"]))
                continue
        else:
            raw: Any = row.get("candidate_id")
            try:
                cid = int(raw)
            except (TypeError, ValueError):
                summary.invalid.append(f"row {n}: candidate_id {raw!r}")
                continue
            if cid not in existing:
                summary.unmatched.append(str(cid))
                continue
        if tier not in RATING_ACTIONS or not who:
            summary.invalid.append(f"row {n}: tier {tier!r} curator {who!r}")
            continue
        mine = live.setdefault(who, my_latest(store, who))
        if mine.get(cid) == tier:
            summary.unchanged += 1
            continue
        record_rating(store, cid, who, tier, str(row.get("note") or ""), source="import")
        mine[cid] = tier
        summary.imported += 1
    return summary
