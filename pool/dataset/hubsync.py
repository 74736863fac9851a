"""The Hub side of publishing: who the token is, what a revision holds, LFS uploads in chunks,
and one commit that survives rate limits. publish.py decides; this module talks to the Hub
through huggingface_hub's HfApi only.

A file is compared by content, never by name: a local file matches a remote one when its
sha256 equals the remote LFS oid, or (for a regular file) its git blob id equals the remote
blob id. That is what makes a rerun cheap and safe: an upload that already landed is not
sent again, and a commit that already landed is recognised instead of repeated.
"""

from __future__ import annotations

import hashlib
import importlib.util
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants, get_session
from huggingface_hub.errors import HfHubHTTPError
from tqdm import tqdm

from refpool.core.errors import RefpoolError

TOKENS_PAGE = "https://huggingface.co/settings/tokens"
RETRY_STATUS = (429, 500, 502, 503, 504)
MAX_RETRY_WAIT_S = 120.0
HF_HOSTS = ("huggingface.co", "hf.co")  # the Hub that speaks Xet; any other is self-hosted
# The HTTP client's names (httpx and its kin) for a connection that never opened...
NO_CONNECTION = ("ConnectError", "ConnectTimeout")
# ... and for one that broke or stalled mid-transfer, which a rerun may get past.
BROKEN_TRANSFER = (
    "ReadTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "ReadError",
    "WriteError",
    "RemoteProtocolError",
)


class HubRefused(RefpoolError, RuntimeError):
    """The Hub said no in a way the user can act on; the message says how."""


@dataclass(frozen=True)
class Fingerprint:
    sha256: str
    git_blob: str
    size: int


def fingerprint(path: Path) -> Fingerprint:
    """sha256 (the LFS oid) and git blob id of a file, read in 1 MB blocks."""
    size = path.stat().st_size
    sha, blob = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % size)
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            sha.update(block)
            blob.update(block)
    return Fingerprint(sha.hexdigest(), blob.hexdigest(), size)


def status_of(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def check_access(api: HfApi, repo_id: str) -> str:
    """Refuse early, before anything is written, when the token cannot publish to repo_id.

    Returns the token's user name. A fine-grained token's scopes are left to the Hub (a 403
    later is translated by `explain`)."""
    try:
        me = api.whoami()
    except HfHubHTTPError as exc:
        if status_of(exc) == 401:
            raise HubRefused(
                "the Hub refused the token (401 Unauthorized): it is invalid, expired or revoked."
                f" Create a token with the write role at {TOKENS_PAGE} and set HF_TOKEN."
            ) from None
        raise
    user = str(me.get("name", ""))
    role = (me.get("auth", {}).get("accessToken") or {}).get("role")
    if role == "read":
        raise HubRefused(
            f"the token of {user} is read-only: publishing needs the `write` role (or a"
            f" fine-grained token with write access to {repo_id.split('/')[0]}'s repos)."
            f" Create one at {TOKENS_PAGE} and set HF_TOKEN."
        )
    owner = repo_id.split("/")[0]
    orgs = [str(o.get("name")) for o in me.get("orgs", [])]
    if owner not in (user, *orgs):
        member = f" (member of {', '.join(orgs)})" if orgs else ""
        raise HubRefused(
            f"{repo_id} belongs to {owner}, and the token is {user}'s{member}: it cannot write"
            f" there. Publish to {user}/{repo_id.split('/')[1]} or an organization you belong"
            f" to, or ask {owner} to add you."
        )
    return user


def explain(exc: BaseException, repo_id: str) -> str | None:
    """A sentence a user can act on for the Hub's refusals, or None for the rest."""
    status = status_of(exc)
    if status == 401:
        return (
            f"the Hub refused the token (401): create a token with the write role at {TOKENS_PAGE}"
        )
    if status == 403:
        return (
            f"the Hub refused to write to {repo_id} (403 Forbidden): the token needs the `write`"
            f" role, or a fine-grained token with write access to {repo_id.split('/')[0]}'s"
            f" repos ({TOKENS_PAGE}); or the repo belongs to someone else"
        )
    return None


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc` and what it was raised from, down to the root (the client wraps its errors)."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in chain and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    return chain


def unreachable(exc: BaseException) -> str | None:
    """Why the Hub could not be reached at all (connection refused, no such host, no answer
    to connect), as the client said it; None when the failure is anything else."""
    for cause in _causes(exc):
        if isinstance(cause, (ConnectionRefusedError, socket.gaierror)) or (
            type(cause).__name__ in NO_CONNECTION
        ):
            text = str(cause)
            return f"{type(cause).__name__}: {text}" if text else type(cause).__name__
    return None


def transient(exc: BaseException) -> bool:
    """True for a failure the same request may get past later: 408, 429 or 5xx from the Hub,
    or a connection that stalled or broke mid-transfer."""
    for cause in _causes(exc):
        if status_of(cause) in (408, *RETRY_STATUS):
            return True
        if isinstance(cause, TimeoutError) or type(cause).__name__ in BROKEN_TRANSFER:
            return True
    return False


def is_huggingface(endpoint: str) -> bool:
    """True for huggingface.co itself (and hf.co); False for a self-hosted Hub."""
    host = (urlparse(endpoint).hostname or "").lower()
    return any(host == h or host.endswith("." + h) for h in HF_HOSTS)


def uploads_over_xet() -> bool:
    """True when huggingface_hub uploads through Xet storage: hf_xet is installed and
    HF_HUB_DISABLE_XET is not set (read when huggingface_hub was imported)."""
    return not constants.HF_HUB_DISABLE_XET and importlib.util.find_spec("hf_xet") is not None


def remote_files(api: HfApi, repo_id: str, revision: str) -> dict[str, tuple[str | None, str]]:
    """path -> (LFS sha256 or None, git blob id) of every file at `revision`."""
    out: dict[str, tuple[str | None, str]] = {}
    for item in api.list_repo_tree(repo_id, recursive=True, revision=revision, repo_type="dataset"):
        if hasattr(item, "blob_id"):
            lfs = getattr(item, "lfs", None)
            out[item.path] = (lfs.sha256 if lfs else None, item.blob_id)
    return out


def same(remote: tuple[str | None, str] | None, local: Fingerprint) -> bool:
    if remote is None:
        return False
    lfs_oid, blob = remote
    return lfs_oid == local.sha256 if lfs_oid else blob == local.git_blob


def upload_in_chunks(
    api: HfApi, repo_id: str, ops: list[CommitOperationAdd], chunk: int, progress: bool
) -> None:
    """Upload the LFS objects of `ops` before any commit, `chunk` files at a time.

    Each chunk asks the Hub which files are LFS, then PUTs only the objects it does not
    already hold; the files are streamed from disk and forgotten once sent, so memory stays
    bounded by the chunk, not the pool. Nothing is visible in the repo until the commit."""
    bar = tqdm(total=len(ops), desc="upload", unit="file", file=sys.stderr, disable=not progress)
    with bar:
        for start in range(0, len(ops), chunk):
            part = ops[start : start + chunk]
            api.preupload_lfs_files(repo_id, additions=part, repo_type="dataset")
            bar.update(len(part))


def commit_with_retries(
    api: HfApi,
    repo_id: str,
    ops: list[CommitOperationAdd | CommitOperationDelete],
    message: str,
    description: str,
    parent: str,
    attempts: int = 5,
) -> str:
    """One commit on top of `parent`; retried after 429/5xx, waiting as Retry-After says.

    `parent` makes a retry safe: if an earlier attempt did land, the Hub refuses the repeat
    (412) instead of committing twice, and the caller finds the release already committed."""
    for attempt in range(attempts):
        try:
            info = api.create_commit(
                repo_id,
                ops,
                commit_message=message,
                commit_description=description,
                repo_type="dataset",
                parent_commit=parent,
            )
            return info.oid
        except HfHubHTTPError as exc:
            status = status_of(exc)
            if status not in RETRY_STATUS or attempt == attempts - 1:
                raise
            response = exc.response
            header = response.headers.get("Retry-After", "") if response is not None else ""
            wait = float(header) if header.strip().isdigit() else float(2**attempt)
            print(
                f"the Hub answered {status} to the commit; retrying in {wait:.0f} s"
                f" (attempt {attempt + 2} of {attempts})",
                file=sys.stderr,
            )
            time.sleep(min(wait, MAX_RETRY_WAIT_S))
    raise AssertionError("unreachable")


@contextmanager
def request_timeout(seconds: float | None) -> Iterator[None]:
    """Give huggingface_hub's shared HTTP client a timeout (it has none by default), so a
    stalled upload fails and is retried instead of hanging the publish forever."""
    session = get_session()
    old = session.timeout
    if seconds:
        session.timeout = seconds
    try:
        yield
    finally:
        get_session().timeout = old
