"""The studio's service layer: every action a curator takes, as plain functions.

The Gradio UI (curation/ui.py) only wires these to components and formats their results;
tests call them directly. Each action returns a `Screen` describing what to show next.
Every rating is committed to SQLite before a Screen is returned, so the UI can only
confirm what is already durable; the cursor is stored too, so a reload resumes.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import quote

from curation import queue as q
from curation.curators import check_name, ensure_curator
from curation.ratings import (
    latest_rating,
    my_latest,
    others_ratings,
    record_rating,
    set_note,
    undo_last,
)
from refpool.store import Store

THUMB_SIZE = 192


@dataclass
class Settings:
    blind: bool = False  # hide model names and other curators' ratings
    target: int = 178  # pool size the progress bar counts towards
    default_curator: str = "curator"
    auth: bool = False  # curators must log in (set when the studio is exposed)
    prefetch: int = 3  # how many upcoming renders the browser preloads
    grid_page_size: int = 48


@dataclass
class Services:
    """What the studio needs: the store and its settings."""

    store: Store
    settings: Settings = field(default_factory=Settings)


@dataclass
class Stage:
    """One round in a candidate's refinement chain."""

    id: int
    round: int
    accepted: bool
    thumb_url: str | None
    critique: str


@dataclass
class Detail:
    """Everything the big view shows about one candidate (already blinded if needed)."""

    id: int
    png_url: str | None
    png_problem: str | None  # why there is no image to show, and what to do
    photo_url: str | None
    photo: dict  # file_name, licence, author, source_url, problem
    program: str | None
    accepted: bool
    violations: list[dict]
    coverage: float | None
    generator: str | None  # None in blind mode
    round: int
    seed: int
    my_tier: str | None
    my_note: str
    seen: int  # id of my live rating row when shown (0: none); detects other tabs
    others: dict[str, dict]  # {} in blind mode
    history: list[Stage]


@dataclass
class Screen:
    curator: str
    detail: Detail | None
    message: str = ""
    level: str = "info"  # info | ok | warn | error
    progress: q.Progress | None = None
    position: int = 0  # 1-based place in the queue (0: none)
    queue_len: int = 0
    prefetch: list[str] = field(default_factory=list)  # image URLs to preload
    next_id: int | None = None  # where a rating will advance to (shown at once by the JS)
    next_url: str | None = None
    neighbours: dict[str, tuple[int, str]] = field(default_factory=dict)  # "1"/"-1" -> (id, url)
    filters: q.Filters = field(default_factory=q.Filters)
    nonce: int = field(default_factory=time.monotonic_ns)  # changes on every response

    @property
    def candidate_id(self) -> int | None:
        return self.detail.id if self.detail else None


# -- files and URLs --------------------------------------------------------------------------
def file_url(path: Path) -> str:
    """A URL Gradio serves (relative, so it works behind a root path)."""
    return "gradio_api/file=" + quote(str(path))


def static_dirs(store: Store) -> list[Path]:
    """Folders the studio may serve: renders, photos, thumbnails, the Pool tab's reports.
    Never the database."""
    dirs = [store.home / d for d in ("blobs/png", "photos", "thumbs", "reports")]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    return dirs


def thumbnail(store: Store, png_sha: str, size: int = THUMB_SIZE) -> Path | None:
    """A cached JPEG thumbnail of a render, made on first use; None if the PNG is missing."""
    out = store.home / "thumbs" / png_sha[:2] / f"{png_sha}_{size}.jpg"
    if out.exists():
        return out
    src = store.png_path(png_sha)
    if not src.exists():
        return None
    from PIL import Image

    out.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(src) as img:
        img = img.convert("RGB")
        img.thumbnail((size, size))
        tmp = out.with_suffix(f".tmp{uuid.uuid4().hex[:6]}")
        img.save(tmp, "JPEG", quality=85)
        tmp.replace(out)
    return out


def _critique_text(raw: str | None) -> str:
    if not raw:
        return ""
    try:
        c = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    scores = ", ".join(f"{k} {v:g}" for k, v in (c.get("scores") or {}).items())
    parts = [f"{c.get('critic', 'critic')}" + (f" ({scores})" if scores else "")]
    parts += [c[k] for k in ("summary", "advice") if c.get(k)]
    return ": ".join(parts[:1]) + (" · " + " · ".join(parts[1:]) if parts[1:] else "")


def _history(store: Store, row: dict) -> list[Stage]:
    """The refinement chain through this candidate: ancestors, itself, first descendants."""
    cols = "id, round, accepted, png_sha, critique, parent_id"
    chain = [row]
    seen = {row["id"]}
    parent = row["parent_id"]
    while parent is not None and parent not in seen and len(chain) < 10:
        rows = store.query(f"SELECT {cols} FROM candidates WHERE id = ?", (parent,))
        if not rows:
            break
        chain.insert(0, dict(rows[0]))
        seen.add(parent)
        parent = rows[0]["parent_id"]
    cur = row["id"]
    while len(chain) < 10:
        rows = store.query(
            f"SELECT {cols} FROM candidates WHERE parent_id = ? ORDER BY id LIMIT 1", (cur,)
        )
        if not rows or rows[0]["id"] in seen:
            break
        chain.append(dict(rows[0]))
        seen.add(rows[0]["id"])
        cur = rows[0]["id"]
    stages = []
    for c in chain:
        thumb = thumbnail(store, c["png_sha"]) if c["png_sha"] else None
        stages.append(
            Stage(
                id=c["id"],
                round=c["round"],
                accepted=bool(c["accepted"]),
                thumb_url=file_url(thumb) if thumb else None,
                critique=_critique_text(c["critique"]),
            )
        )
    return stages


def load_detail(services: Services, candidate_id: int, curator: str) -> Detail | None:
    """The big view of one candidate, or None if it no longer exists."""
    store, blind = services.store, services.settings.blind
    rows = store.query("SELECT * FROM candidates WHERE id = ?", (candidate_id,))
    if not rows:
        return None
    row = dict(rows[0])
    png_url, png_problem = None, None
    if not row["png_sha"]:
        png_problem = f"candidate {candidate_id} has no render (the program failed the gate)"
    else:
        path = store.png_path(row["png_sha"])
        if path.exists():
            png_url = file_url(path)
        else:
            png_problem = (
                f"the render's PNG is missing on disk ({path}); restore the data directory"
                " or re-render this candidate. You can still rate or skip it."
            )
    photo: dict = {}
    photo_url = None
    prow = store.query("SELECT * FROM photos WHERE id = ?", (row["photo_id"],))
    if prow:
        p = prow[0]
        photo = {
            "file_name": p["file_name"],
            "licence": f"{p['licence']} {p['licence_version']}".strip(),
            "author": p["author"],
            "source_url": p["source_url"],
        }
        ppath = (store.home / p["path"]).resolve()
        if ppath.exists():
            photo_url = file_url(ppath)
        else:
            photo["problem"] = f"photo file missing on disk ({p['path']})"
    else:
        photo["problem"] = f"photo {row['photo_id']} is not in the library"
    program = None
    if row["program_sha"]:
        try:
            program = store.program_source(row["program_sha"])
        except OSError:
            program = None
    mine = latest_rating(store, candidate_id, curator)
    return Detail(
        id=candidate_id,
        png_url=png_url,
        png_problem=png_problem,
        photo_url=photo_url,
        photo=photo,
        program=program,
        accepted=bool(row["accepted"]),
        violations=json.loads(row["violations"] or "[]"),
        coverage=row["coverage"],
        generator=None if blind else row["generator"],
        round=row["round"],
        seed=row["seed"],
        my_tier=mine["tier"] if mine else None,
        my_note=mine["note"] if mine else "",
        seen=mine["id"] if mine else 0,
        others={} if blind else others_ratings(store, candidate_id, curator),
        history=_history(store, row),
    )


# -- the screen ------------------------------------------------------------------------------
def clean_filters(services: Services, filters: q.Filters) -> q.Filters:
    """Blind mode may not filter by model or by another curator's ratings."""
    filters.validate()
    if services.settings.blind:
        filters = replace(filters, generator=None, curator=None, disagreements=False)
    return filters


def _prefetch(
    services: Services, ids: list[int], mine: dict[int, str], cid: int
) -> tuple[list[str], int | None, str | None, dict[int, str]]:
    """Renders the next keypresses will most likely show: the next unrated ones, then the
    arrow-key neighbours. Returns (urls to preload, the id a rating will advance to, its
    url, {id: url} of everything picked)."""
    store, want = services.store, services.settings.prefetch
    picks: list[int] = []
    after = cid
    for _ in range(want):
        nxt = q.next_unrated(ids, {**mine, **dict.fromkeys(picks, "love"), cid: "love"}, after)
        if nxt is None:
            break
        picks.append(nxt)
        after = nxt
    first = picks[0] if picks else None  # None: a rating finishes the queue
    for nxt in (q.step(ids, cid, 1), q.step(ids, cid, -1)):  # arrow-key neighbours
        if nxt is not None and nxt != cid and nxt not in picks:
            picks.append(nxt)
    if not picks:
        return [], None, None, {}
    marks = ",".join("?" for _ in picks)
    rows = store.query(f"SELECT id, png_sha FROM candidates WHERE id IN ({marks})", tuple(picks))
    urls = {r["id"]: file_url(store.png_path(r["png_sha"])) for r in rows if r["png_sha"]}
    return [urls[i] for i in picks if i in urls], first, urls.get(first), urls


def screen(
    services: Services,
    curator: str,
    candidate_id: int | None = None,
    message: str = "",
    level: str = "info",
    filters: q.Filters | None = None,
) -> Screen:
    """Show `candidate_id` (or the stored cursor), store it as the cursor, and report."""
    store = services.store
    stored, saved_filters = q.load_session(store, curator)
    filters = clean_filters(services, filters if filters is not None else saved_filters)
    ids = q.build_queue(store, curator, filters)
    mine = my_latest(store, curator)
    if candidate_id is None:
        candidate_id, moved = q.resolve_current(ids, mine, stored)
        if moved and not message:
            message, level = f"candidate {stored} is no longer in this queue; moved on", "warn"
    detail = load_detail(services, candidate_id, curator) if candidate_id is not None else None
    if candidate_id is not None and detail is None:
        gone = candidate_id
        candidate_id, _ = q.resolve_current(ids, mine, gone)
        detail = load_detail(services, candidate_id, curator) if candidate_id else None
        message = (
            message + " " if message else ""
        ) + f"candidate {gone} no longer exists (deleted)."
        level = "warn"
    q.save_session(store, curator, candidate_id, filters)
    if detail is None and not message:
        total = store.query("SELECT COUNT(*) AS n FROM candidates")[0]["n"]
        if total == 0:
            message = (
                "The store has no candidates yet. Generate some first (for example"
                " `refpool demo`), then reload this page."
            )
        else:
            message = "No candidate matches these filters. Clear the filters to see the rest."
        level = "warn"
    pos = ids.index(candidate_id) + 1 if candidate_id in ids else 0
    urls, next_id, next_url, by_id = (
        _prefetch(services, ids, mine, candidate_id) if candidate_id else ([], None, None, {})
    )
    neighbours = {}
    for delta in (1, -1):
        n = q.step(ids, candidate_id, delta) if candidate_id in ids else None
        if n is not None and n != candidate_id and n in by_id:
            neighbours[str(delta)] = (n, by_id[n])
    return Screen(
        curator=curator,
        detail=detail,
        message=message,
        level=level,
        progress=q.progress(store, curator, ids, services.settings.target),
        position=pos,
        queue_len=len(ids),
        prefetch=urls,
        next_id=next_id,
        next_url=next_url,
        neighbours=neighbours,
        filters=filters,
    )


def resolve_curator(services: Services, claimed: str | None, username: str | None) -> str:
    """Who is acting: the logged-in user when auth is on, else the name typed in the studio."""
    if services.settings.auth:
        if not username:
            raise PermissionError("log in first: this studio requires a curator account")
        return check_name(username)
    return ensure_curator(services.store, claimed or services.settings.default_curator)


# -- actions ---------------------------------------------------------------------------------
def rate(
    services: Services,
    curator: str,
    candidate_id: int,
    tier: str,
    note: str = "",
    seen: int | None = None,
) -> Screen:
    """Record one rating durably, then advance to the next candidate I have not rated."""
    store = services.store
    before = latest_rating(store, candidate_id, curator)
    try:
        record_rating(store, candidate_id, curator, tier, note.strip())
    except LookupError:
        return screen(
            services, curator, None,
            f"Candidate {candidate_id} no longer exists (deleted while shown); nothing was"
            " recorded for it. Here is the next one.", "warn",
        )  # fmt: skip
    except ValueError as exc:
        return screen(services, curator, candidate_id, str(exc), "error")
    msg, level = f"Saved {tier} for #{candidate_id}.", "ok"
    if seen is not None and before is not None and before["id"] != seen:
        msg = (
            f"Saved {tier} for #{candidate_id}. It had already been rated {before['tier']} in"
            " another tab or window; your new rating replaces it (z undoes)."
        )
        level = "warn"
    _, filters = q.load_session(store, curator)
    filters = clean_filters(services, filters)
    ids = q.build_queue(store, curator, filters)
    nxt = q.next_unrated(ids, my_latest(store, curator), candidate_id)
    if nxt is None:
        msg += " Everything in this queue is rated."
        nxt = candidate_id if candidate_id in ids else None
    return screen(services, curator, nxt, msg, level)


def undo(services: Services, curator: str) -> Screen:
    rows = undo_last(services.store, curator)
    if not rows:
        return screen(services, curator, None, "Nothing to undo.", "warn")
    cid = rows[-1]["candidate_id"]
    what = rows[0]["tier"] if len(rows) == 1 else f"{len(rows)} grid ratings"
    return screen(services, curator, cid, f"Undid {what} on #{cid}.", "ok")


def navigate(services: Services, curator: str, candidate_id: int | None, delta: int) -> Screen:
    _, filters = q.load_session(services.store, curator)
    ids = q.build_queue(services.store, curator, clean_filters(services, filters))
    return screen(services, curator, q.step(ids, candidate_id, delta))


def goto(services: Services, curator: str, candidate_id: int) -> Screen:
    return screen(services, curator, candidate_id)


def note(services: Services, curator: str, candidate_id: int, text: str) -> Screen:
    text = text.strip()
    if not text:
        return screen(services, curator, candidate_id, "The note is empty.", "warn")
    try:
        row = set_note(services.store, candidate_id, curator, text)
    except LookupError:
        return screen(
            services, curator, None, f"Candidate {candidate_id} no longer exists.", "warn"
        )
    if row is None:
        return screen(
            services, curator, candidate_id,
            "Note kept: it will be saved with your rating of this candidate.", "info",
        )  # fmt: skip
    return screen(services, curator, candidate_id, f"Note saved on #{candidate_id}.", "ok")


def set_filters(services: Services, curator: str, filters: q.Filters) -> Screen:
    filters = clean_filters(services, filters)
    stored, _ = q.load_session(services.store, curator)
    q.save_session(services.store, curator, stored, filters)
    return screen(services, curator, None, filters=filters)


# -- grid triage -------------------------------------------------------------------------------
@dataclass
class Tile:
    id: int
    thumb_url: str | None
    my_tier: str | None
    generator: str | None
    round: int


@dataclass
class Grid:
    tiles: list[Tile]
    page: int
    pages: int
    message: str = ""
    level: str = "info"
    progress: q.Progress | None = None


def grid(
    services: Services, curator: str, page: int = 1, message: str = "", level: str = "info"
) -> Grid:
    store, size = services.store, services.settings.grid_page_size
    _, filters = q.load_session(store, curator)
    ids = q.build_queue(store, curator, clean_filters(services, filters))
    pages = max(1, -(-len(ids) // size))
    page = max(1, min(pages, int(page or 1)))
    chunk = ids[(page - 1) * size : page * size]
    mine = my_latest(store, curator)
    tiles = []
    if chunk:
        marks = ",".join("?" for _ in chunk)
        rows = store.query(
            f"SELECT id, png_sha, generator, round FROM candidates WHERE id IN ({marks}) ORDER BY id",
            tuple(chunk),
        )
        for r in rows:
            thumb = thumbnail(store, r["png_sha"]) if r["png_sha"] else None
            tiles.append(
                Tile(
                    id=r["id"],
                    thumb_url=file_url(thumb) if thumb else None,
                    my_tier=mine.get(r["id"]),
                    generator=None if services.settings.blind else r["generator"],
                    round=r["round"],
                )
            )
    if not ids and not message:
        message, level = "No candidates to show (empty store or filters match nothing).", "warn"
    return Grid(
        tiles,
        page,
        pages,
        message,
        level,
        q.progress(store, curator, ids, services.settings.target),
    )


def grid_rate(services: Services, curator: str, ids: list[int], tier: str, page: int = 1) -> Grid:
    """Rate several candidates in one action; one undo reverts the whole batch."""
    if not ids:
        return grid(services, curator, page, "Select some thumbnails first (click them).", "warn")
    batch = f"grid:{uuid.uuid4().hex[:12]}"
    done, gone = 0, []
    for cid in ids:
        try:
            record_rating(services.store, cid, curator, tier, source=batch)
            done += 1
        except LookupError:
            gone.append(cid)
    msg = f"Saved {tier} for {done} candidates."
    if gone:
        msg += f" {len(gone)} no longer exist and were left out: {gone[:10]}."
    return grid(services, curator, page, msg, "warn" if gone else "ok")


def parse_ids(text: str) -> list[int]:
    """ "1, 2 3" -> [1, 2, 3]; raises ValueError naming the bad token."""
    out = []
    for token in str(text or "").replace(",", " ").split():
        if not token.isdigit():
            raise ValueError(f"not a candidate id: {token!r}")
        out.append(int(token))
    return out
