"""Withdraw a released version: say so everywhere it is read, and keep its files.

A withdrawn version stays in the store, frozen, and on the Hub at its tag, so an environment
pinned to it keeps working and anyone can see what it held. What changes is what is *said*:
  * the store records when and why (`release_marks`), and `pool versions` shows it;
  * its card, as exported from now on, opens with the withdrawal notice;
  * each Hub repo it was published to gets one commit on main: WITHDRAWN.md lists every
    withdrawn version of that repo with its reason, and README.md gets the notice when main
    still holds the withdrawn version's card. The tag vX.Y.Z is not moved.
Without a token the Hub part is left for a rerun of the same command, which does only that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from huggingface_hub import CommitOperationAdd, HfApi

from pool.dataset import hubsync
from pool.dataset.publish import PublishError, resolve_endpoint, resolve_token, scrubbed
from pool.dataset.withdrawn_card import withdrawn_card
from pool.selection.versions import get_version
from refpool.core.errors import InputError
from refpool.core.store import Store, release_marks, releases
from refpool.core.store.release_marks import Withdrawal

NOTICE_FILE = "WITHDRAWN.md"


@dataclass
class WithdrawResult:
    withdrawal: Withdrawal
    newly: bool  # False: it was already withdrawn (the first reason stands)
    hub_marked: list[str] = field(default_factory=list)  # repos marked by this call
    hub_pending: list[str] = field(default_factory=list)  # repos still to mark (no token)

    def summary(self) -> str:
        w = self.withdrawal
        head = f"{w.version} withdrawn" if self.newly else f"{w.version} was already withdrawn"
        lines = [f"{head}: {w.note}; its files are kept for whoever pinned it"]
        lines += [
            f"marked withdrawn on the Hub: {repo} ({NOTICE_FILE}, README)"
            for repo in self.hub_marked
        ]
        if self.hub_pending:
            lines.append(
                f"not yet marked on the Hub: {', '.join(self.hub_pending)} (no token found): set"
                f" HF_TOKEN to a token with write access and run `refpool pool withdraw {w.version}"
                " --reason ...` again; it only marks the Hub"
            )
        return "\n".join(lines)


def withdraw_version(
    store: Store,
    version: str,
    reason: str,
    token: str | None = None,
    endpoint: str | None = None,
) -> WithdrawResult:
    """Withdraw `version` for `reason`, then mark it on each Hub repo it was published to."""
    if not reason.strip():
        raise InputError("say why the version is withdrawn: its notice shows the reason")
    pv = get_version(store, version)
    newly = release_marks.withdrawal_of(store, pv.version) is None
    w = release_marks.withdraw(store, pv.version, reason.strip())
    result = WithdrawResult(w, newly)
    published = store.query(
        "SELECT DISTINCT repo_id, endpoint FROM pool_publications WHERE version = ?",
        (pv.version,),
    )
    todo = [(r["repo_id"], r["endpoint"]) for r in published if r["repo_id"] not in w.hub_marked]
    if not todo:
        return result
    token = resolve_token(token)
    for repo_id, published_at in todo:
        if not token:
            result.hub_pending.append(repo_id)
            continue
        hub = resolve_endpoint(endpoint or published_at)
        with scrubbed(token, repo_id, hub):
            _mark_on_hub(store, HfApi(endpoint=hub, token=token), repo_id, w)
        release_marks.mark_hub(store, pv.version, repo_id)
        result.hub_marked.append(repo_id)
    return result


def _notice_file(store: Store, repo_id: str) -> str:
    """WITHDRAWN.md: every withdrawn version that was published to `repo_id`."""
    published = {
        r["version"]
        for r in store.query("SELECT version FROM pool_publications WHERE repo_id = ?", (repo_id,))
    }
    gone = [w for v, w in sorted(release_marks.withdrawals(store).items()) if v in published]
    lines = [
        "# Withdrawn versions",
        "",
        "These versions of this pool were withdrawn. Their files stay at their tags for whoever"
        " pinned them; do not start new work on them.",
        "",
        "| version | withdrawn | reason |",
        "|---|---|---|",
    ]
    lines += [f"| v{w.version} | {w.withdrawn_at} | {w.reason.replace('|', '/')} |" for w in gone]
    return "\n".join(lines) + "\n"


def _mark_on_hub(store: Store, api: HfApi, repo_id: str, w: Withdrawal) -> None:
    """One commit on main: WITHDRAWN.md, and the card's notice if main still holds `w`'s card."""
    try:
        refs = api.list_repo_refs(repo_id, repo_type="dataset")
        head = next(b.target_commit for b in refs.branches if b.name == "main")
        ops = [CommitOperationAdd(NOTICE_FILE, _notice_file(store, repo_id).encode("utf-8"))]
        card = next((f for f in releases.files(store, w.version) if f.path == "README.md"), None)
        if card is not None:
            frozen = store.blob_path(card.kind, card.sha256)
            on_main = hubsync.remote_files(api, repo_id, head).get("README.md")
            if hubsync.same(on_main, hubsync.fingerprint(frozen)):
                marked = withdrawn_card(frozen.read_text("utf-8"), w)
                ops.append(CommitOperationAdd("README.md", marked.encode("utf-8")))
        hubsync.commit_with_retries(
            api, repo_id, list(ops), f"Withdraw refpool pool v{w.version}", w.reason, head
        )
    except Exception as exc:
        why = hubsync.explain(exc, repo_id) or f"{type(exc).__name__}: {exc}"
        raise PublishError(
            f"{w.version} is withdrawn in this store, but the Hub did not take the notice on"
            f" {repo_id} ({why}); the repo is unchanged. Run the same command again: it only"
            " marks the Hub."
        ) from None
