"""Who sees what in the studio: a blind studio gives each curator their own shuffled queue and
tokens for ids (curation/blind_ids.py); only leads see agreement and everyone's progress."""

from __future__ import annotations

from curation import queue as q
from curation.blind_ids import BlindIds, blind_ids
from curation.curators import is_lead
from refpool.core.store import Store


def viewer_ids(store: Store, curator: str, blind: bool) -> BlindIds | None:
    """The curator's tokens in a blind studio (None when the studio is not blind)."""
    return blind_ids(store, curator) if blind else None


def sees_everyone(store: Store, curator: str, blind: bool) -> bool:
    """Agreement and the whole pool's progress: everyone in an open studio, only leads in
    a blind one (both reveal other curators' ratings)."""
    return not blind or is_lead(store, curator)


def queue_for(store: Store, curator: str, filters: q.Filters, blind: bool) -> q.Queue:
    """The curator's queue: in a blind studio, in their own shuffled order."""
    tokens = viewer_ids(store, curator, blind)
    order = tokens.token if tokens else None
    return q.build_queue(store, curator, filters, order, blind)
