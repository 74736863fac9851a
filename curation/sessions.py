"""The studio's login sessions: Gradio's token table, checked against the store on every use.

Gradio keeps `app.tokens` (session token -> user name) and asks it who is behind a request's
cookie (`.get`), writes it on login and clears it on logout. `SessionTable` takes its place
(app.py installs it) so that:

* a session stands for the account, not the typed name: "ALICE" or alice in fullwidth letters
  log in as the stored `alice`, so logging out (which ends every session of that user) ends
  the sessions opened under any spelling of the name (`curators.name_key`);
* a session lasts only while the account is unchanged: it remembers the password hash it was
  opened under, and the first request after a password change or the curator's removal
  (`refpool curators add/remove`, from any process) finds it gone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass

from curation import curators
from refpool.core.store import Store

TOKEN_COOKIE_PREFIX = "access-token-"  # Gradio's session cookies: access-token[-unsecure]-<id>


@dataclass(frozen=True)
class Session:
    name: str  # the account's stored spelling
    password_hash: str  # the account's password when the session was opened


class SessionTable(MutableMapping[str, str]):
    """token -> curator name, for the sessions whose account is still as it was at login."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def __setitem__(self, token: str, typed_name: str) -> None:
        # Gradio's login route, after the password was checked: remember the account as it is
        account = curators.find_account(self.store, typed_name)
        if account is None or account.password_hash is None:
            return  # removed in the meantime: the cookie names no session
        with self._lock:
            self._sessions[token] = Session(account.name, account.password_hash)

    def __getitem__(self, token: str) -> str:
        return self._sessions[token].name

    def __delitem__(self, token: str) -> None:
        with self._lock:
            del self._sessions[token]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._sessions))

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, token: object, default: str | None = None) -> str | None:  # type: ignore[override]
        """Who a cookie's token logs in, or `default` for none or a session that has ended."""
        session = self._sessions.get(token) if isinstance(token, str) else None
        if session is None:
            return default
        if not self._still_valid(session):
            self.end_sessions(session.name)
            return default
        return session.name

    def _still_valid(self, session: Session) -> bool:
        rows = self.store.query(
            "SELECT password_hash FROM curators WHERE name = ?", (session.name,)
        )
        return bool(rows) and rows[0]["password_hash"] == session.password_hash

    def end_sessions(self, name: str) -> int:
        """End every session of the curator `name` (any spelling); returns how many."""
        key = curators.name_key(name)
        with self._lock:
            ended = [t for t, s in self._sessions.items() if curators.name_key(s.name) == key]
            for token in ended:
                del self._sessions[token]
        return len(ended)

    def has_session(self, cookie_header: str | None) -> bool:
        """True when a request's Cookie header carries the token of a live session."""
        return any(self.get(token) is not None for token in session_tokens(cookie_header))


def session_tokens(cookie_header: str | None) -> list[str]:
    """The values of Gradio's session cookies in a Cookie header."""
    tokens = []
    for part in (cookie_header or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name.startswith(TOKEN_COOKIE_PREFIX) and value:
            tokens.append(value.strip('"'))
    return tokens
