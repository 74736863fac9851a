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


def add_curator(store: Store, name: str, password: str | None = None) -> bool:
    """Create a curator, or set the password of an existing one. Returns True if created."""
    name = check_name(name)
    if password is not None and len(password) < 8:
        raise InputError("a curator password needs at least 8 characters")
    hashed = hash_password(password) if password else None
    existed = bool(store.query("SELECT 1 FROM curators WHERE name = ?", (name,)))
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
    with store.write_lock:
        store.db.execute("INSERT OR IGNORE INTO curators (name) VALUES (?)", (name,))
    return name


def list_curators(store: Store) -> list[dict]:
    rows = store.query("SELECT name, password_hash IS NOT NULL AS has_password FROM curators")
    return [{"name": r["name"], "has_password": bool(r["has_password"])} for r in rows]


def authenticate(store: Store, name: str, password: str) -> bool:
    """True when the curator exists, has a password, and it matches (constant-time compare).

    An unknown name, or one without a password, is checked against DUMMY_HASH: the same work.
    """
    name = normalise_name(name)
    rows = store.query("SELECT password_hash FROM curators WHERE name = ?", (name,))
    stored = rows[0]["password_hash"] if rows else None
    matches = verify_password(password or "", stored or DUMMY_HASH)
    return bool(stored) and matches
