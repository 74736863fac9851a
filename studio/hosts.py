"""Who may reach the studio: which `Host` names it answers and which `Origin`s may change state.

* DNS rebinding: a web page the curator visits can point its own name at 127.0.0.1 and then
  talk to a loopback studio as if it were same-origin. The browser still sends that name in
  `Host`, so the studio answers only the address it was started on (its loopback names when
  bound to loopback; any IP literal when bound to every interface, since rebinding needs a
  name) and the names given with `--allowed-host`.
* Cross-site requests: a browser sends `Origin` with every POST; a state-changing request
  whose `Origin` is not the studio itself (or an allowed name) is refused. Requests without
  `Origin` come from scripts and tools, which cannot ride on a curator's cookies.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from refpool.core.errors import InputError

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})
WILDCARDS = frozenset({"", "0.0.0.0", "::"})
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def hostname(netloc: str) -> str:
    """'Example.org.:7860' -> 'example.org'; '[::1]:80' -> '::1' (no port, lower case)."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0]
    if netloc.count(":") == 1:
        netloc = netloc.split(":", 1)[0]
    return netloc.rstrip(".")


def is_loopback(name: str) -> bool:
    name = hostname(name)
    ip = _ip(name)
    return name in LOOPBACK_NAMES or (ip is not None and ip.is_loopback)


def check_allowed_host(name: str) -> str:
    """A name for `--allowed-host`: a bare host name or IP address (no scheme, port or path)."""
    cleaned = hostname(name)
    bare = name.strip().strip("[]")
    if not cleaned or any(c in name for c in "/ @?#*") or (":" in bare and not _ip(bare)):
        raise InputError(
            f"the allowed host {name!r} is not a host name: give the bare name the curators"
            " type in the address bar, e.g. studio.example.org"
        )
    return cleaned


def check_trusted_proxy(address: str) -> str:
    """An address (or network) for `--trusted-proxy`: an IP, e.g. 10.0.0.2 or 10.0.0.0/24."""
    try:
        return str(ipaddress.ip_network(address.strip(), strict=False))
    except ValueError:
        raise InputError(
            f"the trusted proxy {address!r} is not an IP address or network: give the address"
            " your reverse proxy connects from, e.g. 127.0.0.1 or 10.0.0.0/24"
        ) from None


@dataclass(frozen=True)
class HostRules:
    """The names a studio bound to `bound` answers to, plus the `allowed` ones."""

    bound: str
    allowed: frozenset[str] = frozenset()

    @classmethod
    def make(cls, bound: str, allowed: Iterable[str] = ()) -> HostRules:
        return cls(hostname(bound), frozenset(check_allowed_host(a) for a in allowed))

    def host_ok(self, host_header: str | None) -> bool:
        if not host_header:
            return False
        name = hostname(host_header)
        if name in self.allowed or name == self.bound:
            return True
        if is_loopback(self.bound):
            return is_loopback(name)
        if self.bound in WILDCARDS:  # every interface: its addresses, and this machine's names
            return _ip(name) is not None or is_loopback(name)
        return False

    def origin_ok(self, origin: str | None, host_header: str | None) -> bool:
        """True for no Origin, the studio's own origin, or an allowed name's origin."""
        if origin is None:
            return True
        parts = urlsplit(origin.strip().lower())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # "null" (a sandboxed frame, a file) and the like
        if host_header and _same_netloc(parts.scheme, parts.netloc, host_header):
            return True
        return hostname(parts.netloc) in self.allowed

    def refusal(self, host_header: str | None) -> str:
        return (
            f"this studio does not answer to the name {hostname(host_header or '')!r}: open it"
            " at the address it was started on, or restart it with --allowed-host NAME for"
            " each name curators use (a reverse proxy's public name, for example)"
        )


def _same_netloc(scheme: str, origin_netloc: str, host_header: str) -> bool:
    default = "443" if scheme == "https" else "80"

    def split(netloc: str) -> tuple[str, str]:
        name = hostname(netloc)
        rest = netloc.strip().lower().rsplit("]", 1)[-1]
        port = rest.rsplit(":", 1)[1] if ":" in rest and rest.count(":") == 1 else default
        return name, port

    return split(origin_netloc) == split(host_header)
