"""The pool's view of a candidate: the candidate, its photo and its final tier; and the one
eligibility rule that selection, release and export all apply.

Tiers come only from curation.ratings (the documented rule), never from the ratings table.
Candidates and photos come from the store's record modules; nothing here writes SQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from curation.ratings import final_tiers, live_ratings
from refpool.core.contracts import OPEN_LICENCES, Candidate, Photo
from refpool.core.store import Store, candidates
from refpool.core.store.photos import get_photos

# Reason key -> what it means, for the checks of `ineligibility` (selection adds its own).
INELIGIBLE = {
    "unrated": "no live rating yet",
    "reject": "rated reject",
    "gate": "not accepted by the gate (or no image)",
    "licence": "its photo has no open licence or no attribution",
}


@dataclass(frozen=True)
class PoolEntry:
    """A candidate as the pool sees it: the records themselves, plus the curators' verdict."""

    candidate: Candidate
    photo: Photo
    tier: str | None = None  # final tier (curation.ratings); None: no live rating
    votes: dict[str, str] = field(default_factory=dict)  # curator -> live tier

    @property
    def id(self) -> int:
        return self.candidate.id


def load_entries(store: Store, ids: Iterable[int] | None = None) -> dict[int, PoolEntry]:
    """candidate id -> PoolEntry, in id order, for the given ids (default: every candidate).

    Ids that are not in the store are absent from the result.
    """
    if ids is None:
        found = candidates.list_candidates(store)
    else:
        found = list(candidates.get_many(store, ids).values())
    photos = get_photos(store, {c.photo_id for c in found})
    tiers = final_tiers(store)
    votes = live_ratings(store)
    return {
        c.id: PoolEntry(c, photos[c.photo_id], tiers.get(c.id), votes.get(c.id, {}))
        for c in found
        if c.photo_id in photos  # a candidate always has its photo; this guards a broken store
    }


def ineligibility(entry: PoolEntry) -> tuple[str, str] | None:
    """Why `entry` cannot be in a pool, as (reason key of INELIGIBLE, detail), or None.

    Checked in this order, the first failure being the answer:
      1. no live rating, or rated reject (its tier; a released version passes its own tier);
      2. not accepted by the gate, an infrastructure error, or no PNG;
      3. its photo has no open licence (CC0, CC-BY, CC-BY-SA, PD) or no author and source URL
         to credit: such a painting can never reach a dataset.
    """
    c, photo = entry.candidate, entry.photo
    if entry.tier is None:
        return ("unrated", "no curator has rated it (skips do not count)")
    if entry.tier == "reject":
        vetoes = sorted(curator for curator, tier in entry.votes.items() if tier == "reject")
        return ("reject", f"rejected by {', '.join(vetoes)}")
    if not c.accepted or c.infra_error or not c.png_sha:
        infra = f"; infra: {c.infra_error}" if c.infra_error else ""
        return ("gate", f"gate: {', '.join(c.gate_codes or ['not accepted'])}{infra}")
    named = f"photo {photo.id} ({photo.file_name})"
    if not photo.open_licence:
        return (
            "licence",
            f"{named} licence {photo.licence!r} is not an open licence"
            f" ({', '.join(OPEN_LICENCES)})",
        )
    if not photo.attributable:
        return ("licence", f"{named} has no author or source URL to attribute")
    return None
