"""Publish a released pool version to the Hugging Face Hub as a dataset repo.

One step: export the version, create the repo if needed, upload everything in ONE commit
whose message names the version (stale data shards are deleted in the same commit), then
tag that commit vX.Y.Z so the RL environment can pin it.

Credentials: an explicit token, else huggingface_hub's own lookup (HF_TOKEN, then the token
file written by `hf auth login`). With none, publishing refuses before any network call.
The token is never printed or logged, and is scrubbed from any error text.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants, get_token

from pool.export import export_version
from pool.versions import get_version
from refpool.store import Store

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
NO_TOKEN = (
    "no Hugging Face token found: set HF_TOKEN (a token with write access, from"
    " https://huggingface.co/settings/tokens) or run `hf auth login`, then retry."
    " Use --dry-run to see what would be uploaded without a token."
)


class PublishError(RuntimeError):
    pass


@dataclass
class PublishPlan:
    repo_id: str
    version: str
    tag: str
    commit_message: str
    endpoint: str
    private: bool
    files: list[tuple[str, int]]  # (path in repo, bytes)
    has_token: bool
    deletes: list[str] = field(default_factory=list)  # known only once the repo is listed

    def summary(self) -> str:
        total = sum(s for _, s in self.files)
        lines = [
            f"repo: {self.endpoint}/datasets/{self.repo_id} ({'private' if self.private else 'public'})",
            f"commit: {self.commit_message!r}, then tag {self.tag}",
        ]
        lines += [f"  {size:>12,d}  {path}" for path, size in self.files]
        lines.append(f"  {total:>12,d}  total, {len(self.files)} files")
        lines += [f"  delete  {p}" for p in self.deletes]
        if not self.has_token:
            lines.append(f"token: none found; a real publish would refuse ({NO_TOKEN})")
        return "\n".join(lines)


@dataclass
class PublishResult:
    plan: PublishPlan
    commit_oid: str
    commit_url: str
    tag: str


def resolve_token(explicit: str | None = None) -> str | None:
    return explicit or get_token()


def resolve_endpoint(explicit: str | None = None) -> str:
    # Read HF_ENDPOINT at call time: huggingface_hub.constants froze it at import.
    return (explicit or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


@contextmanager
def _scrubbed(token: str | None) -> Iterator[None]:
    """Re-raise any failure as PublishError with the token removed from its text."""
    try:
        yield
    except PublishError:
        raise
    except Exception as exc:
        text = f"{type(exc).__name__}: {exc}"
        if token:
            text = text.replace(token, "<token>")
        raise PublishError(f"publishing failed: {text}") from None


def publish(
    store: Store,
    repo_id: str,
    version: str = "latest",
    private: bool = False,
    dry_run: bool = False,
    token: str | None = None,
    endpoint: str | None = None,
    workdir: Path | str | None = None,
    progress: bool = True,
) -> PublishPlan | PublishResult:
    """Publish `version` to `repo_id`; with dry_run, return the plan without any network call."""
    if not REPO_ID.match(repo_id or ""):
        raise PublishError(f"--repo must look like OWNER/NAME (got {repo_id!r})")
    pv = get_version(store, version)
    token = resolve_token(token)
    if not token and not dry_run:
        raise PublishError(NO_TOKEN)
    tag = f"v{pv.version}"
    endpoint = resolve_endpoint(endpoint)
    with tempfile.TemporaryDirectory(prefix="refpool-publish-") as tmp:
        folder = Path(workdir) if workdir else Path(tmp)
        export = export_version(store, folder, pv, progress=progress)
        plan = PublishPlan(
            repo_id=repo_id,
            version=pv.version,
            tag=tag,
            commit_message=f"Release refpool pool v{pv.version} ({export.rows} images)",
            endpoint=endpoint,
            private=private,
            files=export.files,
            has_token=bool(token),
        )
        if dry_run:
            return plan
        api = HfApi(endpoint=endpoint, token=token)
        with _scrubbed(token):
            api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
            refs = api.list_repo_refs(repo_id, repo_type="dataset")
            taken = {t.name: t.target_commit for t in refs.tags}
            if tag in taken:
                raise PublishError(
                    f"{repo_id} already has tag {tag} (commit {taken[tag][:12]}); released versions"
                    " are immutable: release a new version and publish that"
                )
            ours = {p for p, _ in export.files}
            remote = api.list_repo_files(repo_id, repo_type="dataset")
            plan.deletes = sorted(p for p in remote if p.startswith("data/") and p not in ours)
            ops: list = [
                CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(folder / p))
                for p in sorted(ours)
            ]
            ops += [CommitOperationDelete(path_in_repo=p) for p in plan.deletes]
            info = api.create_commit(
                repo_id,
                ops,
                commit_message=plan.commit_message,
                commit_description=pv.notes or "",
                repo_type="dataset",
            )
            api.create_tag(
                repo_id,
                tag=tag,
                revision=info.oid,
                tag_message=plan.commit_message,
                repo_type="dataset",
            )
    store.insert(
        "pool_publications",
        {
            "version": pv.version,
            "repo_id": repo_id,
            "endpoint": endpoint,
            "commit_oid": info.oid,
            "tag": tag,
            "url": info.commit_url,
        },
    )
    return PublishResult(plan, info.oid, info.commit_url, tag)
