"""Rating commands: what one key in the studio sends, applied at most once.

The browser makes each command (studio/static/studio.js): a fresh id, the candidate on
screen when the key was pressed, and that view's token. It keeps the command in
localStorage until the server answers, so a dropped connection, a reload or a restart
sends it again; the id, stored with the rating (ratings.command_id), makes a repeat a no-op.

A view token is an HMAC of (curator, candidate id) under a key kept in the store: every
view names the candidates it shows (the one on screen, and the ones the page may show
ahead of the server), each with its token. A rating whose token does not match was not
pressed on a painting the studio showed that curator, and is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from refpool.core.contracts import Rating
from refpool.core.errors import InputError
from refpool.core.html import esc
from refpool.core.store import Store

KEY_NAME = "view-tokens"
TOKEN_CHARS = 24  # hex characters of the HMAC kept: 96 bits, plenty against a guess
_keys: weakref.WeakKeyDictionary[Store, bytes] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class RateCommand:
    """One rating key, as the browser sent it."""

    command_id: str
    candidate_id: int
    tier: str
    note: str = ""
    seen: int | None = None  # my rating row id the view showed (-1: shown ahead of the server)
    token: str = ""  # the view token of candidate_id (see view_token)


def _key(store: Store) -> bytes:
    """The store's token key, made on first use and then read from memory (no write per key)."""
    key = _keys.get(store)
    if key is None:
        with store.write_lock:
            store.db.execute(
                "INSERT OR IGNORE INTO studio_keys (name, value) VALUES (?, ?)",
                (KEY_NAME, os.urandom(32)),
            )
        row = store.query("SELECT value FROM studio_keys WHERE name = ?", (KEY_NAME,))[0]
        key = _keys[store] = bytes(row[0])
    return key


def view_token(store: Store, curator: str, candidate_id: int) -> str:
    """The token a view carries for `candidate_id`, shown to `curator`."""
    message = f"{curator}\n{candidate_id}".encode()
    return hmac.new(_key(store), message, hashlib.sha256).hexdigest()[:TOKEN_CHARS]


def token_matches(store: Store, curator: str, candidate_id: int, token: str) -> bool:
    return hmac.compare_digest(view_token(store, curator, candidate_id), token or "")


def parse_command(text: str) -> RateCommand:
    """A command from its JSON; InputError when it is not one (nothing is saved)."""
    try:
        data = json.loads(text or "")
        seen = data.get("seen")
        command = RateCommand(
            command_id=str(data["id"]),
            candidate_id=int(data["cid"]),
            tier=str(data["tier"]),
            note=str(data.get("note") or ""),
            seen=None if seen is None else int(seen),
            token=str(data.get("token") or ""),
        )
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InputError(
            "the rating command is not one the studio understands (reload the page and press"
            " the key again; nothing was saved)"
        ) from exc
    if not 8 <= len(command.command_id) <= 64:
        raise InputError("a rating command needs an id of 8 to 64 characters; nothing was saved")
    return command


def applied(store: Store, command_id: str) -> tuple[int, str] | None:
    """(candidate id, tier) of the rating this command already saved, or None."""
    rows = store.query("SELECT candidate_id, tier FROM ratings WHERE command_id = ?", (command_id,))
    return (rows[0]["candidate_id"], rows[0]["tier"]) if rows else None


# -- what the studio says about a command ----------------------------------------------------
def not_shown_text(candidate_id: int, curator: str) -> str:
    return (
        f"Not saved: this page never showed #{candidate_id} to {curator}, so the key cannot be"
        " for it. Nothing was recorded; rate what is on screen now."
    )


def save_failed_text(tier: str, candidate_id: int, exc: Exception) -> str:
    return (
        f"Could not save {tier} for #{candidate_id}: {exc}. Nothing was recorded; press the"
        " key again (if it keeps failing, check the data directory's disk and lock)."
    )


def saved_text(
    tier: str, candidate_id: int, seen: int | None, before: Rating | None, done: bool
) -> tuple[str, str]:
    """(message, level) for a saved rating; a warning when another page rated it meanwhile."""
    msg, level = f"Saved {tier} for #{candidate_id}.", "ok"
    if seen is not None and seen >= 0 and before is not None and before.id != seen:
        msg = (
            f"Saved {tier} for #{candidate_id}. It had been rated {before.tier} since this page"
            " showed it (in another tab, window or the Grid); your new rating replaces it"
            " (z undoes)."
        )
        level = "warn"
    if done:
        msg += " Everything in this queue is rated."
    return msg, level


def command_attrs(
    tokens: dict[int, str], command: str = "", outcome: str = "", name: Callable[[int], str] = str
) -> str:
    """A view's data attributes for the page's rating commands (static/studio.js): the token
    of each id it shows (`name` spells the id as the page does), and what became of the
    command this view answers."""
    pairs = " ".join(f"{name(i)}:{t}" for i, t in tokens.items())
    return (
        f' data-tokens="{esc(pairs)}" data-command="{esc(command)}" data-outcome="{esc(outcome)}"'
    )
