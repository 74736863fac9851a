"""Is a release new? The content hash of what a version publishes, its name left out.

Two versions are identical when they would publish the same rows (every column but
`pool_version`), the same files (by sha256; metadata.jsonl is the rows, README.md is compared
as its facts) and the same card facts: the card with the version's name, its date and its
notes taken out. Releasing an identical selection is refused, naming the version it equals.
A version released before m016 has no stored hash; it is hashed from its frozen files.
"""

from __future__ import annotations

import hashlib
import json

from refpool.core.contracts import PoolVersion, ReleaseRow
from refpool.core.store import Store, release_marks, releases
from refpool.core.store.releases import FrozenFile

AS_ROWS = ("metadata.jsonl", "README.md")  # hashed as rows and as card facts instead


def card_facts(card: str, pv: PoolVersion) -> str:
    """The card without what names this version rather than describes its content."""
    kept = [line for line in card.splitlines() if not line.startswith("Released ")]
    text = "\n".join(kept).replace(f"v{pv.version}", "v<version>")
    return text.replace(pv.created_at, "<date>") if pv.created_at else text


def content_hash(
    store: Store, pv: PoolVersion, rows: list[ReleaseRow], files: list[FrozenFile]
) -> str:
    """sha256 of the version's rows, files and card facts (the card read from its blob)."""
    readme = next((f for f in files if f.path == "README.md"), None)
    card = store.blob_path(readme.kind, readme.sha256).read_text("utf-8") if readme else ""
    payload = {
        "rows": [{k: v for k, v in r.to_dict().items() if k != "pool_version"} for r in rows],
        "files": sorted((f.path, f.sha256) for f in files if f.path not in AS_ROWS),
        "card": card_facts(card, pv),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def equal_version(store: Store, sha: str, versions: list[PoolVersion]) -> str | None:
    """The first of `versions` that publishes exactly what `sha` hashes, else None."""
    known = release_marks.content_hashes(store)
    for v in versions:
        if v.version not in known:
            frozen = releases.files(store, v.version)
            if not frozen:  # released before m010 and never exported: nothing to compare
                continue
            known[v.version] = content_hash(store, v, releases.rows(store, v.version), frozen)
        if known[v.version] == sha:
            return v.version
    return None
