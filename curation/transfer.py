"""Import and export of ratings: CSV, JSON, and the published tool's format.

Formats
  csv / json   one row per (candidate, curator) live rating:
               candidate_id, curator, tier, note, created_at, generator, round, png_sha
  published    the published experiment's rating file: a JSON object
               {"<file name>": "love" | "okay" | "nope" | "meh"} for ONE curator.

Mapping of the published labels (our decision, documented in the README):
  love -> love, okay -> okay, nope -> reject,
  meh  -> skip: the published pool held only love/okay, so a "meh" image was left out of it;
          calling it okay would add images its curator left out, calling it reject would
          overstate it. A skip keeps it out of the pool and back in the queue for a second
          look (the original label is kept in the note).
Export to published maps back: reject -> nope, skip -> meh. Without --curator it writes the
final tiers (see curation/ratings.py), so the file is the pool decision.

File names: a candidate is exported as `candidate_<id>.png`; on import a name matches a
candidate by that form, by `<id>.png`, by the dataset's `<id:06d>.png` (pool/export.py),
or by `<png sha256>.png`.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from curation.ratings import RATABLE, final_tiers, my_latest, record_rating
from refpool.store import Store

FORMATS = ("csv", "json", "published")
FROM_PUBLISHED = {"love": "love", "okay": "okay", "nope": "reject", "meh": "skip"}
TO_PUBLISHED = {"love": "love", "okay": "okay", "reject": "nope", "skip": "meh"}
COLUMNS = ("candidate_id", "curator", "tier", "note", "created_at", "generator", "round", "png_sha")


def published_name(candidate_id: int) -> str:
    return f"candidate_{candidate_id}.png"


def export_rows(store: Store, curator: str | None = None, include_skips: bool = True) -> list[dict]:
    """Each curator's live rating per candidate (latest non-undone row), oldest first."""
    sql = (
        "SELECT r.id, r.candidate_id, r.curator, r.tier, r.note, r.created_at,"
        " c.generator, c.round, c.png_sha FROM ratings r"
        " LEFT JOIN candidates c ON c.id = r.candidate_id WHERE r.undone = 0"
    )
    params: tuple = ()
    if curator:
        sql += " AND r.curator = ?"
        params = (curator,)
    latest: dict[tuple[int, str], dict] = {}
    for row in store.query(sql + " ORDER BY r.id", params):
        latest[(row["candidate_id"], row["curator"])] = {k: row[k] for k in COLUMNS}
    rows = list(latest.values())
    return [r for r in rows if include_skips or r["tier"] != "skip"]


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
    raise ValueError(f"unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}")


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


def _name_index(store: Store) -> dict[str, int]:
    index: dict[str, int] = {}
    for row in store.query("SELECT id, png_sha FROM candidates"):
        index[published_name(row["id"])] = row["id"]
        index[f"{row['id']}.png"] = row["id"]
        index[f"{row['id']:06d}.png"] = row[
            "id"
        ]  # the published dataset's file_name (pool/export.py)
        if row["png_sha"]:
            index[f"{row['png_sha']}.png"] = row["id"]
    return index


def _parse(path: Path, default_curator: str | None) -> tuple[list[dict], str]:
    """Rows of {candidate_id|file_name, curator, tier, note} and the detected format."""
    text = path.read_text("utf-8-sig")
    if path.suffix.lower() == ".csv":
        return list(csv.DictReader(io.StringIO(text))), "csv"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}: not valid JSON ({exc}); expected a .csv or .json ratings file"
        ) from exc
    if isinstance(data, dict):
        if not default_curator:
            raise ValueError(
                f"{path} is in the published format (file name -> label), which names no"
                " curator: pass --curator NAME"
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
        return rows, "published"
    if isinstance(data, list):
        return data, "json"
    raise ValueError(f"{path}: expected a JSON list of ratings or a published mapping")


def import_ratings(store: Store, path: Path | str, curator: str | None = None) -> ImportSummary:
    """Append ratings from a file (source='import'). `curator` overrides/sets the curator."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no ratings file at {path}")
    rows, _fmt = _parse(path, curator)
    summary = ImportSummary()
    names = _name_index(store)
    existing = {r["id"] for r in store.query("SELECT id FROM candidates")}
    live: dict[str, dict[int, str]] = {}
    for n, row in enumerate(rows, start=1):
        who = (curator or str(row.get("curator") or "")).strip()
        tier = str(row.get("tier") or "").strip().lower()
        if "file_name" in row and not row.get("candidate_id"):
            cid = names.get(str(row["file_name"]))
            if cid is None:
                summary.unmatched.append(str(row["file_name"]))
                continue
        else:
            try:
                cid = int(row.get("candidate_id"))
            except (TypeError, ValueError):
                summary.invalid.append(f"row {n}: candidate_id {row.get('candidate_id')!r}")
                continue
            if cid not in existing:
                summary.unmatched.append(str(cid))
                continue
        if tier not in RATABLE or not who:
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
