"""Ratings: an append-only log in SQLite; undo marks a row undone, never deletes it.

The final tier of a candidate (documented rule, used by pool selection and export):
  * each curator's live rating is their latest rating that is not undone; "skip" counts as none;
  * any curator's "reject" -> reject (one veto is enough: the pool is the reward);
  * otherwise the majority of love/okay; a tie goes to "okay" (the cautious tier);
  * no live rating -> unrated (absent from the result).
"""

from __future__ import annotations

from collections import Counter

from contracts import TIERS
from pool.store import Store

RATABLE = (*TIERS, "skip")


def record_rating(
    store: Store, candidate_id: int, curator: str, tier: str, note: str = "", source: str = "studio"
) -> int:
    """Write one rating durably (committed before returning); returns its row id."""
    if tier not in RATABLE:
        raise ValueError(f"tier must be one of {', '.join(RATABLE)}, not {tier!r}")
    if not curator.strip():
        raise ValueError("a rating needs a curator name")
    if not store.query("SELECT 1 FROM candidates WHERE id = ?", (candidate_id,)):
        raise LookupError(f"candidate {candidate_id} does not exist (deleted or never generated)")
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
