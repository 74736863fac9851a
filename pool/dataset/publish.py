"""Publish a released pool version to the Hugging Face Hub as a dataset repo.

Export the release (images/, sources/, metadata.jsonl, photo_attribution.json, README.md:
the files frozen when the version was released), then make the repo equal to it and tag it:

  1. check the token can write to OWNER/NAME (whoami), create the repo if needed;
  2. if the tag vX.Y.Z exists: holding this very release, there is nothing to do; holding
     anything else, refuse (an environment pinned to it would silently change) unless
     force_tag;
  3. upload the LFS objects (PNGs, and anything else the Hub stores in LFS) in chunks, before
     any commit: nothing is visible in the repo yet;
  4. ONE commit on top of the current head that adds what changed and deletes whatever an
     earlier release left under images/, sources/, data/ or in metadata.jsonl, retried
     after 429/5xx (Retry-After honoured); skipped when the head already holds the release;
  5. tag that commit vX.Y.Z, so an environment pinned to the tag never sees half a release.

Any failure leaves the repo as it was (before 4) or as the release (after 4), and the same
command resumes: uploads already done are not repeated, a landed commit is recognised and
only the tag is made. What the message advises follows the cause (`advice`): a Hub that could
not be reached at all, a self-hosted Hub that may not speak Xet, a temporary failure worth a
rerun, or a cause to fix first.

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

from pool.dataset import hubsync
from pool.dataset.export import RELEASE_DIRS, RELEASE_FILES, describe_files, export_version
from pool.selection.versions import get_version
from refpool.core import secret_values
from refpool.core.errors import RefpoolError
from refpool.core.store import Store, release_marks

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
LFS_CHUNK = 200  # files per preupload round: bounds memory and request size
UPLOAD_TIMEOUT_S = 300.0  # per HTTP request; huggingface_hub has no timeout of its own
NO_TOKEN = (
    "no Hugging Face token found: set HF_TOKEN (a token with write access, from"
    " https://huggingface.co/settings/tokens) or run `hf auth login`, then retry."
    " A dry run shows what would be uploaded without a token."
)
PRIVATE_NOTE = (
    "the repo is private: only accounts with access can download it, so the RL environment"
    " needs HF_TOKEN with read access to it"
)


class PublishError(RefpoolError, RuntimeError):
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
    unchanged: int = 0  # files the repo already holds with the same content
    notes: list[str] = field(default_factory=list)  # from the export: how it was frozen, ...

    def summary(self, verbose: bool = False) -> str:
        """The plan; folders of the release as one line each unless `verbose`."""
        total = sum(s for _, s in self.files)
        lines = [
            f"repo: {self.endpoint}/datasets/{self.repo_id} ({'private' if self.private else 'public'})",
            f"commit: {self.commit_message!r}, then tag {self.tag}",
        ]
        lines += describe_files(self.files, verbose)
        lines.append(f"  {total:>12,d}  total, {len(self.files)} files")
        if self.unchanged:
            lines.append(f"  ({self.unchanged} of them already on the Hub unchanged: not re-sent)")
        lines += [f"  delete  {p}" for p in self.deletes]
        lines += [f"note: {n}" for n in self.notes]
        if self.private:
            lines.append(f"note: {PRIVATE_NOTE}")
        if not self.has_token:
            lines.append(f"token: none found; a real publish would refuse ({NO_TOKEN})")
        return "\n".join(lines)


@dataclass
class PublishResult:
    plan: PublishPlan
    commit_oid: str
    commit_url: str
    tag: str
    committed: bool = True  # False: the head already held the release (a rerun that only tags)
    tagged: bool = True  # False: the tag already named this release; nothing was done


def resolve_token(explicit: str | None = None) -> str | None:
    token = explicit or get_token()
    secret_values.register(token)  # a Hub error that echoes part of it is scrubbed by value
    return token


def resolve_endpoint(explicit: str | None = None) -> str:
    # Read HF_ENDPOINT at call time: huggingface_hub.constants froze it at import.
    return (explicit or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def advice(
    exc: BaseException, endpoint: str, resume: str, uploading: bool = False
) -> tuple[str, tuple[str, ...]]:
    """What to do after `exc`, by its cause: (sentences, hints). `resume` says what a rerun
    skips; `uploading` marks a failure while sending the release's files."""
    why = hubsync.unreachable(exc)
    if why:
        return (
            f"The Hub at {endpoint} could not be reached ({why}): check that address (given"
            " for this publish, else $HF_ENDPOINT, else huggingface.co) and this machine's"
            " network. Without a Hub, write the release to a folder instead.",
            ("choose an endpoint", "export offline"),
        )
    if (
        uploading
        and hubsync.uploads_over_xet()
        and not hubsync.is_huggingface(endpoint)
        and hubsync.explain(exc, "") is None
    ):
        return (
            f"{endpoint} is not huggingface.co, and huggingface_hub uploads through Xet"
            " storage, which a self-hosted Hub may not speak: set HF_HUB_DISABLE_XET=1 to"
            f" upload over plain Git LFS, then run the same command again; {resume}.",
            (),
        )
    if hubsync.transient(exc):
        return f"The failure looks temporary: rerun the same command; {resume}.", ()
    return f"Fix the cause in parentheses; the same command then resumes: {resume}.", ()


@contextmanager
def scrubbed(token: str | None, repo_id: str, endpoint: str) -> Iterator[None]:
    """Re-raise any failure as PublishError, actionable where possible, without the token."""
    try:
        yield
    except PublishError as exc:
        if token and token in str(exc):
            raise PublishError(str(exc).replace(token, "<token>"), hint=exc.hints) from None
        raise
    except Exception as exc:
        hint = hubsync.explain(exc, repo_id)
        text = str(exc) if isinstance(exc, hubsync.HubRefused) else f"{type(exc).__name__}: {exc}"
        hints: tuple[str, ...] = ()
        if hint:
            text = f"{hint}. ({text})"
        elif hubsync.unreachable(exc):  # the sentence names the client's reason itself
            what, hints = advice(exc, endpoint, "")
            text = what[0].lower() + what[1:]
        elif hubsync.transient(exc):
            what, hints = advice(exc, endpoint, "nothing done before is repeated")
            text = f"{text}. {what}"
        if token:
            text = text.replace(token, "<token>")
        raise PublishError(f"publishing failed: {text}", hint=hints) from None


def stale_files(remote: list[str], release: set[str]) -> list[str]:
    """Files of an earlier release that this one does not have: they go in the same commit."""
    return sorted(
        p for p in remote if p not in release and (p.startswith(RELEASE_DIRS) or p in RELEASE_FILES)
    )


def _holds_release(
    remote: dict[str, tuple[str | None, str]], local: dict[str, hubsync.Fingerprint]
) -> bool:
    """True when a revision's release files are exactly this release, byte for byte."""
    managed = {p for p in remote if p.startswith(RELEASE_DIRS) or p in RELEASE_FILES}
    return managed == set(local) and all(hubsync.same(remote[p], f) for p, f in local.items())


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
    force_tag: bool = False,
    chunk: int = LFS_CHUNK,
    timeout_s: float | None = UPLOAD_TIMEOUT_S,
    with_diversity: bool = True,
) -> PublishPlan | PublishResult:
    """Publish `version` to `repo_id`; with dry_run, return the plan without any network call.

    The files are the version's frozen release. `with_diversity=False` leaves the diversity
    table out of the card only of a version released before m010, frozen by this export."""
    if not REPO_ID.match(repo_id or ""):
        raise PublishError(f"the dataset repo id must look like OWNER/NAME (got {repo_id!r})")
    pv = get_version(store, version)
    if gone := release_marks.withdrawal_of(store, pv.version):
        raise PublishError(
            f"version {pv.version} was withdrawn ({gone.note}): it is not published anew."
            " Publish another version; `refpool pool withdraw` already marked it on the Hubs"
            " it was published to."
        )
    token = resolve_token(token)
    if not token and not dry_run:
        raise PublishError(NO_TOKEN, hint="dry run")
    tag = f"v{pv.version}"
    endpoint = resolve_endpoint(endpoint)
    with tempfile.TemporaryDirectory(prefix="refpool-publish-") as tmp:
        folder = Path(workdir) if workdir else Path(tmp)
        export = export_version(
            store, folder, pv, progress=progress, repo_id=repo_id, with_diversity=with_diversity
        )
        plan = PublishPlan(
            repo_id=repo_id,
            version=pv.version,
            tag=tag,
            commit_message=f"Release refpool pool v{pv.version} ({export.rows} images)",
            endpoint=endpoint,
            private=private,
            files=export.files,
            has_token=bool(token),
            notes=export.notes,
        )
        if dry_run:
            return plan
        api = HfApi(endpoint=endpoint, token=token)
        with scrubbed(token, repo_id, endpoint), hubsync.request_timeout(timeout_s):
            result = _sync(api, plan, folder, pv.notes or "", force_tag, chunk, progress)
    if not store.query(
        "SELECT 1 FROM pool_publications WHERE repo_id = ? AND tag = ? AND commit_oid = ?",
        (repo_id, tag, result.commit_oid),
    ):
        store.insert(
            "pool_publications",
            {
                "version": pv.version,
                "repo_id": repo_id,
                "endpoint": endpoint,
                "commit_oid": result.commit_oid,
                "tag": tag,
                "url": result.commit_url,
            },
        )
    return result


def _sync(
    api: HfApi,
    plan: PublishPlan,
    folder: Path,
    notes: str,
    force_tag: bool,
    chunk: int,
    progress: bool,
) -> PublishResult:
    repo_id, tag = plan.repo_id, plan.tag
    hubsync.check_access(api, repo_id)
    api.create_repo(repo_id, repo_type="dataset", private=plan.private, exist_ok=True)
    plan.private = bool(api.repo_info(repo_id, repo_type="dataset").private)
    local = {p: hubsync.fingerprint(folder / p) for p, _ in plan.files}
    refs = api.list_repo_refs(repo_id, repo_type="dataset")
    tags = {t.name: t.target_commit for t in refs.tags}
    head = next(b.target_commit for b in refs.branches if b.name == "main")
    url = f"{plan.endpoint}/datasets/{repo_id}/commit/"
    if tag in tags:
        if _holds_release(hubsync.remote_files(api, repo_id, tags[tag]), local):
            return PublishResult(plan, tags[tag], url + tags[tag], tag, False, False)
        if not force_tag:
            raise PublishError(
                f"{repo_id} already has tag {tag} (commit {tags[tag][:12]}) with other contents"
                f" than this release. An RL environment pinned to {tag} would silently start"
                " judging against different references. Release a new version and publish that;"
                f" or, if nothing depends on {tag} yet, move the tag.",
                hint="force tag",
            )
    remote = hubsync.remote_files(api, repo_id, head)
    plan.deletes = stale_files(list(remote), set(local))
    changed = [p for p, f in local.items() if not hubsync.same(remote.get(p), f)]
    plan.unchanged = len(local) - len(changed)
    committed = bool(changed or plan.deletes)
    oid = head
    if committed:
        adds = [
            CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(folder / p)) for p in changed
        ]
        try:
            hubsync.upload_in_chunks(api, repo_id, adds, chunk, progress)
        except Exception as exc:
            what, hints = advice(
                exc, plan.endpoint, "files already uploaded are not sent again", uploading=True
            )
            raise PublishError(
                f"uploading the release to {repo_id} failed, before any commit: the repo is"
                f" unchanged. {what} ({_why(exc, repo_id)})",
                hint=hints,
            ) from None
        deletes = [CommitOperationDelete(path_in_repo=p) for p in plan.deletes]
        try:
            oid = hubsync.commit_with_retries(
                api, repo_id, [*adds, *deletes], plan.commit_message, notes, head
            )
        except Exception as exc:
            # The commit may have landed before its reply was lost: look before giving up.
            now = api.list_repo_refs(repo_id, repo_type="dataset").branches
            new_head = next(b.target_commit for b in now if b.name == "main")
            if new_head == head or not _holds_release(
                hubsync.remote_files(api, repo_id, new_head), local
            ):
                what, hints = advice(
                    exc, plan.endpoint, "the uploaded files are kept by the Hub and not sent again"
                )
                raise PublishError(
                    f"the commit to {repo_id} failed; the repo is as it was (main at"
                    f" {new_head[:12]}). {what} ({_why(exc, repo_id)})",
                    hint=hints,
                ) from None
            oid = new_head
    try:
        if tag in tags:  # force_tag: moving it was asked for explicitly
            api.delete_tag(repo_id, tag=tag, repo_type="dataset")
        api.create_tag(
            repo_id, tag=tag, revision=oid, tag_message=plan.commit_message, repo_type="dataset"
        )
    except Exception as exc:
        what, hints = advice(
            exc, plan.endpoint, "it finds the release already committed and only tags it"
        )
        raise PublishError(
            f"commit {oid[:12]} on {repo_id} holds the release, but tagging it {tag} failed."
            f" {what} ({_why(exc, repo_id)})",
            hint=hints,
        ) from None
    return PublishResult(plan, oid, url + oid, tag, committed, True)


def _why(exc: BaseException, repo_id: str) -> str:
    """What went wrong, down to the root cause huggingface_hub wrapped it in."""
    parts: list[str] = []
    cause: BaseException | None = exc
    while cause is not None and len(parts) < 3:
        parts.append(hubsync.explain(cause, repo_id) or f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__
    return " <- ".join(p.splitlines()[0] for p in parts)
