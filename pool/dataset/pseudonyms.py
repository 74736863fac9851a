"""Curator pseudonyms for a release that must not name its curators (`--pseudonymise-curators`).

A curator's pseudonym is an HMAC of their name under a random key made once per store and
kept in it (studio_keys, never published): the same curator has the same pseudonym in every
version released from this store, so agreement can be followed across versions, and nobody
without the key can turn a pseudonym back into a name (a list of guessed names included).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable

from refpool.core.store import Store

KEY_NAME = "curator-pseudonyms"
PREFIX = "curator-"


def pseudonym_key(store: Store) -> bytes:
    """The store's pseudonym key, made on first use."""
    with store.write_lock:
        store.db.execute(
            "INSERT OR IGNORE INTO studio_keys (name, value) VALUES (?, ?)",
            (KEY_NAME, os.urandom(32)),
        )
    return bytes(store.query("SELECT value FROM studio_keys WHERE name = ?", (KEY_NAME,))[0][0])


def pseudonym(key: bytes, curator: str) -> str:
    """`curator-` and 8 hex digits: stable for a name and a key."""
    digest = hmac.new(key, curator.encode("utf-8"), hashlib.sha256).hexdigest()
    return PREFIX + digest[:8]


def curator_namer(store: Store, pseudonymise: bool) -> Callable[[str], str]:
    """How a release names a curator: as they are, or by their pseudonym."""
    if not pseudonymise:
        return lambda name: name
    key = pseudonym_key(store)
    return lambda name: pseudonym(key, name)
