"""Ratings: an append-only log in SQLite; undo marks a row undone, never deletes it.

The final tier of a candidate (documented rule, used by pool selection and export):
  * each curator's live rating is their latest rating that is not undone; "skip" counts as none;
  * any curator's "reject" -> reject (one veto is enough: the pool is the reward);
  * otherwise the majority of love/okay; a tie goes to "okay" (the cautious tier);
  * no live rating -> unrated (absent from the result).
"""

from __future__ import annotations

from collections import Counter

from refpool.core.contracts import RATING_ACTIONS, Rating
from refpool.core.errors import InputError, NotFound
from refpool.core.store import Store, candidates


def record_rating(
    store: Store, candidate_id: int, curator: str, tier: str, note: str = "", source: str = "studio"
) -> int:
    """Write one rating durably (committed before returning); returns its row id."""
    if tier not in RATING_ACTIONS:
        raise InputError(f"tier must be one of {', '.join(RATING_ACTIONS)}, not {tier!r}")
    if not curator.strip():
        raise InputError("a rating needs a curator name")
    if not candidates.exists(store, candidate_id):
        raise NotFound(f"candidate {candidate_id} does not exist (deleted or never generated)")
    return store.insert(
        "ratings",
        {
            "candidate_id": candidate_id,
            "curator": curator.strip(),
            "tier": tier,
            "note": note,
            "source": source,
        },
    )


def record_rating_and_cursor(
    store: Store,
    candidate_id: int,
    curator: str,
    tier: str,
    note: str,
    cursor: int | None,
    command_id: str | None = None,
) -> int:
    """A studio rating and the cursor it advances to, in one transaction: after a crash the
    studio resumes where the curator was going, never one behind. Returns the rating's id.
    `command_id` (the browser's id for the key) is unique: the same command is saved once."""
    if tier not in RATING_ACTIONS:
        raise InputError(f"tier must be one of {', '.join(RATING_ACTIONS)}, not {tier!r}")
    if not curator.strip():
        raise InputError("a rating needs a curator name")
    if not candidates.exists(store, candidate_id):
        raise NotFound(f"candidate {candidate_id} does not exist (deleted or never generated)")
    with store.transaction() as db:
        cur = db.execute(
            "INSERT INTO ratings (candidate_id, curator, tier, note, source, command_id)"
            " VALUES (?, ?, ?, ?, 'studio', ?)",
            (candidate_id, curator.strip(), tier, note, command_id),
        )
        db.execute(
            "INSERT INTO curation_sessions (curator, candidate_id) VALUES (?, ?)"
            " ON CONFLICT(curator) DO UPDATE SET candidate_id = excluded.candidate_id,"
            " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            (curator.strip(), cursor),
        )
    assert cur.lastrowid is not None  # an INSERT always sets it
    return cur.lastrowid


def live_ratings(store: Store) -> dict[int, dict[str, str]]:
    """candidate id -> {curator: tier} of each curator's latest non-undone, non-skip rating."""
    rows = store.query(
        "SELECT candidate_id, curator, tier FROM ratings WHERE undone = 0 ORDER BY id"
    )
    latest: dict[tuple[int, str], str] = {}
    for row in rows:
        latest[(row["candidate_id"], row["curator"])] = row["tier"]
    out: dict[int, dict[str, str]] = {}
    for (cid, curator), tier in latest.items():
        if tier != "skip":
            out.setdefault(cid, {})[curator] = tier
    return out


def final_tier(votes: dict[str, str]) -> str | None:
    """Apply the documented rule to one candidate's {curator: tier}."""
    if not votes:
        return None
    tiers = Counter(votes.values())
    if tiers["reject"]:
        return "reject"
    return "love" if tiers["love"] > tiers["okay"] else "okay"


def final_tiers(store: Store) -> dict[int, str]:
    """candidate id -> love|okay|reject for every candidate with a live rating."""
    result = {}
    for cid, votes in live_ratings(store).items():
        tier = final_tier(votes)
        if tier:
            result[cid] = tier
    return result


# -- per-curator state: undo, notes, history ------------------------------------------------
def my_latest(store: Store, curator: str) -> dict[int, str]:
    """candidate id -> this curator's live tier, *including* "skip" (it drives the queue)."""
    rows = store.query(
        "SELECT candidate_id, tier FROM ratings WHERE curator = ? AND undone = 0 ORDER BY id",
        (curator,),
    )
    return {row["candidate_id"]: row["tier"] for row in rows}


def latest_rating(store: Store, candidate_id: int, curator: str) -> Rating | None:
    """This curator's live rating of one candidate, or None."""
    rows = store.query(
        "SELECT id, tier, note, created_at, source FROM ratings"
        " WHERE candidate_id = ? AND curator = ? AND undone = 0 ORDER BY id DESC LIMIT 1",
        (candidate_id, curator),
    )
    if not rows:
        return None
    row = rows[0]
    return Rating(
        candidate_id, curator, row["tier"], row["note"], row["source"], row["id"], row["created_at"]
    )


def others_ratings(store: Store, candidate_id: int, curator: str) -> dict[str, dict]:
    """Other curators' live ratings of one candidate: {curator: {tier, note}} (skips left out)."""
    rows = store.query(
        "SELECT curator, tier, note FROM ratings WHERE candidate_id = ? AND curator != ?"
        " AND undone = 0 ORDER BY id",
        (candidate_id, curator),
    )
    latest = {row["curator"]: {"tier": row["tier"], "note": row["note"]} for row in rows}
    return {name: r for name, r in latest.items() if r["tier"] != "skip"}


def undo_last(store: Store, curator: str) -> list[dict]:
    """Mark this curator's latest live rating undone (a whole grid batch at once).

    Returns the rows undone ({id, candidate_id, tier, source}), newest first; [] when nothing is left.
    Undo is a flag, never a delete, so the log keeps every decision.
    """
    # One IMMEDIATE transaction: two tabs pressing z at once undo two rows, not one twice.
    with store.transaction() as db:
        row = db.execute(
            "SELECT id, candidate_id, tier, source FROM ratings"
            " WHERE curator = ? AND undone = 0 ORDER BY id DESC LIMIT 1",
            (curator,),
        ).fetchone()
        if row is None:
            return []
        if row["source"].startswith("grid:"):
            rows = db.execute(
                "SELECT id, candidate_id, tier, source FROM ratings"
                " WHERE curator = ? AND undone = 0 AND source = ? ORDER BY id DESC",
                (curator, row["source"]),
            ).fetchall()
        else:
            rows = [row]
        db.executemany("UPDATE ratings SET undone = 1 WHERE id = ?", [(r["id"],) for r in rows])
    return [
        {"id": r["id"], "candidate_id": r["candidate_id"], "tier": r["tier"], "source": r["source"]}
        for r in rows
    ]


def set_note(store: Store, candidate_id: int, curator: str, note: str) -> int | None:
    """Attach a note to this curator's live rating by appending a copy that carries it.

    Appending (rather than updating) keeps the log honest and lets undo restore the old note.
    Returns the new row id, or None when the curator has not rated the candidate yet (the
    studio then sends the note along with the next rating).
    """
    current = latest_rating(store, candidate_id, curator)
    if current is None:
        return None
    return record_rating(store, candidate_id, curator, current.tier, note, source="note")
