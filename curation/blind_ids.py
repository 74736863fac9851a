"""What a blind curator's page calls a candidate: an opaque number, never its global id.

Global ids are handed out in generation order, and a batch is generated one model at a time,
so an id (or the order ids come in) tells a curator which paintings share a model. In blind
mode each curator gets their own keyed shuffle instead: a candidate's token is an HMAC of the
curator's name and its id under a random key kept in the store, and the queue runs in token
order. The same curator sees the same order in every session; two curators see different
orders; without the key neither can turn a token back into an id.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from refpool.core.store import Store, candidates

KEY_NAME = "blind-order"
TOKEN_BYTES = 6  # 48 bits: below 2**53, so the page's JavaScript keeps a token exact


def blind_key(store: Store) -> bytes:
    """The store's shuffle key, made on first use (every studio on the store shares it)."""
    with store.write_lock:
        store.db.execute(
            "INSERT OR IGNORE INTO studio_keys (name, value) VALUES (?, ?)",
            (KEY_NAME, os.urandom(32)),
        )
    return bytes(store.query("SELECT value FROM studio_keys WHERE name = ?", (KEY_NAME,))[0][0])


@dataclass
class BlindIds:
    """One curator's tokens for candidate ids, and back."""

    curator: str
    key: bytes
    _ids: dict[int, int] = field(default_factory=dict)  # token -> id, filled on first lookup

    def token(self, candidate_id: int) -> int:
        message = f"{self.curator}\n{candidate_id}".encode()
        digest = hmac.new(self.key, message, hashlib.sha256).digest()
        return int.from_bytes(digest[:TOKEN_BYTES], "big") or 1  # 0 means "none" to the page

    def seen_token(self, rating_id: int) -> int:
        """The page's stand-in for a rating row id (a global counter of everyone's ratings)."""
        return self.token(-rating_id) if rating_id else 0

    def candidate(self, store: Store, token: int | None) -> int | None:
        """The id a token stands for, or None when it names no candidate."""
        if token is None:
            return None
        if token not in self._ids:
            self._ids = {self.token(i): i for i in candidates.list_ids(store)}
        return self._ids.get(token)

    def order(self, ids: Iterable[int]) -> list[int]:
        return sorted(ids, key=self.token)


def blind_ids(store: Store, curator: str) -> BlindIds:
    return BlindIds(curator, blind_key(store))
