"""Named curator accounts. Passwords are stored only as salted scrypt hashes.

Accounts are optional on a loopback studio (anyone at the keyboard names themself); when the
studio is exposed (non-loopback host or --auth) Gradio's login checks them via `authenticate`.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import unicodedata
from typing import NamedTuple

from refpool.core.errors import InputError
from refpool.core.store import Store
from refpool.core.text import repair_text

# Letters and digits of any script (José, Zoë, 李), then also '.', '_' or '-'.
NAME_RE = re.compile(r"^[^\W_][\w.-]{0,39}$")
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}
# Verified against when a name is unknown or has no password, so a refusal costs the same
# scrypt work either way (the response time must not tell real names from made-up ones).
DUMMY_HASH = "scrypt$16384$8$1$" + "00" * 16 + "$" + "00" * 32


def normalise_name(name: str) -> str:
    """The one spelling of a typed name: stripped, NFC (José typed as e + accent is José),
    lone surrogates repaired. Accounts, logins and login locks all key on it."""
    return unicodedata.normalize("NFC", repair_text(name or "").strip())


def name_key(name: str) -> str:
    """What two spellings of a name must share to be one curator: NFKC, then case-folded
    (alice typed in fullwidth letters, "ALICE" and "alice" are one). Logins, login locks, sessions
    and logout all compare names by it; accounts keep the spelling they were added with."""
    folded = unicodedata.normalize("NFKC", normalise_name(name)).casefold()
    return unicodedata.normalize("NFKC", folded)


def check_name(name: str) -> str:
    """Return the cleaned name or raise InputError saying what a valid name looks like."""
    name = normalise_name(name)
    if not NAME_RE.match(name):
        raise InputError(
            f"invalid curator name {name!r}: use 1-40 letters (any alphabet), digits, '.', '_'"
            " or '-', starting with a letter or digit"
        )
    return name


def hash_password(password: str, salt: bytes | None = None) -> str:
    """`scrypt$n$r$p$salt$hash` (hex); a fresh random salt unless one is given."""
    salt = salt if salt is not None else os.urandom(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, dklen=32, **_SCRYPT)
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    got = hashlib.scrypt(
        password.encode("utf-8"), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=32
    )
    return hmac.compare_digest(got.hex(), digest)


class Account(NamedTuple):
    name: str  # as stored: the spelling ratings are recorded under
    password_hash: str | None


def find_account(store: Store, name: str) -> Account | None:
    """The account a typed name stands for: the exact spelling, else the one account with the
    same `name_key`. Two accounts differing only in case or width (possible in a store from
    before names were compared this way) are ambiguous: neither is found."""
    query = "SELECT name, password_hash FROM curators"
    exact = store.query(query + " WHERE name = ?", (normalise_name(name),))
    if exact:
        return Account(exact[0]["name"], exact[0]["password_hash"])
    key = name_key(name)
    same = [Account(r["name"], r["password_hash"]) for r in store.query(query)]
    same = [a for a in same if name_key(a.name) == key]
    return same[0] if len(same) == 1 else None


def remove_curator(store: Store, name: str) -> str | None:
    """Delete a curator's account (their ratings stay, under their name); returns the name
    removed, or None when there is no such curator. A running studio ends their sessions at
    their next request (curation.sessions checks the account on every request)."""
    account = find_account(store, name)
    if account is None:
        return None
    with store.write_lock:
        store.db.execute("DELETE FROM curators WHERE name = ?", (account.name,))
    return account.name


def add_curator(store: Store, name: str, password: str | None = None) -> bool:
    """Create a curator, or set the password of an existing one. Returns True if created."""
    name = check_name(name)
    if password is not None and len(password) < 8:
        raise InputError("a curator password needs at least 8 characters")
    hashed = hash_password(password) if password else None
    account = find_account(store, name)  # "ALICE" updates alice: one login name, one account
    existed = account is not None
    name = account.name if account is not None else name
    with store.write_lock:
        if existed:
            if hashed:
                store.db.execute(
                    "UPDATE curators SET password_hash = ? WHERE name = ?", (hashed, name)
                )
        else:
            store.db.execute(
                "INSERT INTO curators (name, password_hash) VALUES (?, ?)", (name, hashed)
            )
    return not existed


def ensure_curator(store: Store, name: str) -> str:
    """Register a name on first use (no password); returns the cleaned name."""
    name = check_name(name)
    if store.query("SELECT 1 FROM curators WHERE name = ?", (name,)):
        return name  # known: no write (every studio request names its curator)
    with store.write_lock:
        store.db.execute("INSERT OR IGNORE INTO curators (name) VALUES (?)", (name,))
    return name


def list_curators(store: Store) -> list[dict]:
    rows = store.query("SELECT name, password_hash IS NOT NULL AS has_password, lead FROM curators")
    return [
        {"name": r["name"], "has_password": bool(r["has_password"]), "lead": bool(r["lead"])}
        for r in rows
    ]


def set_lead(store: Store, name: str, lead: bool) -> None:
    """Mark a curator as a lead (or not). A lead sees agreement and everyone's progress in a
    blind studio; their own ratings stay blind like everyone's."""
    name = check_name(name)
    with store.write_lock:
        store.db.execute("UPDATE curators SET lead = ? WHERE name = ?", (int(lead), name))


def is_lead(store: Store, name: str) -> bool:
    rows = store.query("SELECT lead FROM curators WHERE name = ?", (normalise_name(name),))
    return bool(rows and rows[0]["lead"])


def authenticate(store: Store, name: str, password: str) -> bool:
    """True when the curator exists, has a password, and it matches (constant-time compare).

    An unknown name, or one without a password, is checked against DUMMY_HASH: the same work.
    """
    account = find_account(store, name)
    stored = account.password_hash if account is not None else None
    matches = verify_password(password or "", stored or DUMMY_HASH)
    return bool(stored) and matches
