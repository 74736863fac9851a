"""The studio's typed contracts, in one place: its settings, the services its handlers get,
a rating request, and the `Screen` every action returns (curation/service.py makes them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from curation import queue as q
from curation.blind_ids import BlindIds
from curation.detail import Detail
from refpool.core.defaults import TARGET_POOL_SIZE
from refpool.core.store import Store


@dataclass
class Settings:
    blind: bool = False  # hide model names and other curators' ratings
    target: int = TARGET_POOL_SIZE  # pool size the progress bar counts towards
    default_curator: str = "curator"
    auth: bool = False  # curators must log in (set when the studio is exposed)
    prefetch: int = 3  # how many upcoming renders the browser preloads
    grid_page_size: int = 48


NOTE_LIMIT = 2000  # characters; a note is a remark, not a document


@dataclass
class Services:
    """What the studio needs: the store and its settings."""

    store: Store
    settings: Settings = field(default_factory=Settings)
    # curator -> the page (Gradio session) whose action last moved their cursor: only for
    # wording a refused rating ("another tab" only when it was one); lost on restart
    cursor_tab: dict[str, str] = field(default_factory=dict)
    # curator -> (candidate, tier) a gate-rejected painting was asked to confirm for: the same
    # key pressed again on it records the rating (lost on restart: the studio asks again)
    to_confirm: dict[str, tuple[int, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class RatingRequest:
    """One rating, as a handler (or a script) asks the service for it.

    `expected` is the candidate the page believes the curator's queue is at (the one on
    screen when the key was pressed): when given, the rating is refused unless the stored
    cursor is there too. `tab` names the page, so a refusal only blames another tab when it
    was one. `command_id` is the browser's id for the key: a command already saved is not
    saved again. `token`, when given, must be the view token the studio showed this curator
    `candidate_id` with. `seen` is the curator's rating row id the view showed.
    """

    curator: str
    candidate_id: int
    tier: str
    note: str = ""
    seen: int | None = None
    expected: int | None = None
    tab: str | None = None
    command_id: str | None = None
    token: str | None = None


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
    chain: list[tuple[int, str]] = field(default_factory=list)  # next unrated ones, in order
    filters: q.Filters = field(default_factory=q.Filters)
    nonce: int = field(default_factory=time.monotonic_ns)  # changes on every response
    # blind mode: the curator's tokens for ids; the page is built from a whitelist of
    # fields (curation/blind_view.py), never from the Detail as a whole
    blind: BlindIds | None = None
    tokens: dict[int, str] = field(default_factory=dict)  # id -> view token, for each shown
    command: str = ""  # the rating command this screen answers (its browser-made id)
    outcome: str = ""  # saved | duplicate | refused | failed: what became of that command
    queue: list[int] = field(default_factory=list)  # the queue's ids, in order

    @property
    def candidate_id(self) -> int | None:
        return self.detail.id if self.detail else None
