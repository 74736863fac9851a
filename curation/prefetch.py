"""What the page preloads: the renders the next keypresses will most likely show.

The browser (studio/static/studio.js) shows the next one at once from these, ahead of
the server's reply; the rating still goes to the server with the id the page showed.
"""

from __future__ import annotations

from curation import queue as q
from curation.files import render_url, warm_thumbnails
from refpool.core.store import Store, candidates


def prefetch(
    store: Store, want: int, ids: list[int], mine: dict[int, str], cid: int
) -> tuple[list[str], int | None, str | None, dict[int, str], list[int]]:
    """The next `want` unrated ones after `cid`, then the arrow-key neighbours. Returns (urls
    to preload, the id a rating will advance to, its url, {id: url} of everything picked,
    the next unrated ids in order)."""
    picks: list[int] = []
    after = cid
    for _ in range(want):
        nxt = q.next_unrated(ids, {**mine, **dict.fromkeys(picks, "love"), cid: "love"}, after)
        if nxt is None:
            break
        picks.append(nxt)
        after = nxt
    first = picks[0] if picks else None  # None: a rating finishes the queue
    unrated = list(picks)
    for nxt in (q.step(ids, cid, 1), q.step(ids, cid, -1)):  # arrow-key neighbours
        if nxt is not None and nxt != cid and nxt not in picks:
            picks.append(nxt)
    if not picks:
        return [], None, None, {}, []
    found = candidates.get_many(store, picks)
    urls = {c.id: render_url(c.png_sha) for c in found.values() if c.png_sha}
    # Their history strips show them and their parents as thumbnails: make those now.
    parents = candidates.get_many(store, [c.parent_id for c in found.values() if c.parent_id])
    warm_thumbnails(store, [c.png_sha for c in (*found.values(), *parents.values()) if c.png_sha])
    return (
        [urls[i] for i in picks if i in urls],
        first,
        urls.get(first) if first is not None else None,
        urls,
        unrated,
    )
