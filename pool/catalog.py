"""Candidates joined with their photo and their final tier: the one read path for the pool.

Tiers come only from curation.ratings (the documented rule), never from the ratings table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from curation.ratings import final_tiers, live_ratings
from refpool.contracts import OPEN_LICENCES
from refpool.store import Store


@dataclass(frozen=True)
class PoolItem:
    candidate_id: int
    photo_id: int
    generator: str
    round: int
    seed: int
    accepted: bool
    coverage: float | None
    png_sha: str | None
    program_sha: str | None
    render_id: int | None
    parent_id: int | None
    run_id: int | None
    infra_error: str | None
    violations: list[dict[str, Any]]
    critique: dict[str, Any] | None
    photo_file_name: str
    photo_licence: str
    photo_licence_version: str
    photo_author: str
    photo_url: str
    subject: str
    tier: str | None = None
    votes: dict[str, str] = field(default_factory=dict)

    @property
    def licence_ok(self) -> bool:
        return self.photo_licence in OPEN_LICENCES

    @property
    def attribution_ok(self) -> bool:
        return bool(self.photo_author.strip() and self.photo_url.strip())

    @property
    def photo_licence_label(self) -> str:
        v = self.photo_licence_version.strip()
        return (
            f"{self.photo_licence}-{v}"
            if v and self.photo_licence not in ("PD",)
            else self.photo_licence
        )


_SQL = """
SELECT c.id, c.photo_id, c.generator, c.round, c.seed, c.accepted, c.coverage, c.png_sha,
       c.program_sha, c.render_id, c.parent_id, c.run_id, c.infra_error, c.violations,
       c.critique, p.file_name, p.licence, p.licence_version, p.author, p.source_url, p.subject
FROM candidates c JOIN photos p ON p.id = c.photo_id
"""


def load_items(store: Store, ids: Iterable[int] | None = None) -> dict[int, PoolItem]:
    """candidate id -> PoolItem for the given ids (default: every candidate)."""
    tiers = final_tiers(store)
    votes = live_ratings(store)
    if ids is None:
        rows = store.query(_SQL + " ORDER BY c.id")
    else:
        wanted = sorted(set(int(i) for i in ids))
        rows = []
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            rows += store.query(
                _SQL + f" WHERE c.id IN ({','.join('?' * len(chunk))}) ORDER BY c.id", tuple(chunk)
            )
    items = {}
    for r in rows:
        cid = int(r["id"])
        items[cid] = PoolItem(
            candidate_id=cid,
            photo_id=int(r["photo_id"]),
            generator=r["generator"],
            round=int(r["round"]),
            seed=int(r["seed"]),
            accepted=bool(r["accepted"]),
            coverage=r["coverage"],
            png_sha=r["png_sha"],
            program_sha=r["program_sha"],
            render_id=r["render_id"],
            parent_id=r["parent_id"],
            run_id=r["run_id"],
            infra_error=r["infra_error"],
            violations=json.loads(r["violations"] or "[]"),
            critique=json.loads(r["critique"]) if r["critique"] else None,
            photo_file_name=r["file_name"],
            photo_licence=r["licence"],
            photo_licence_version=r["licence_version"] or "",
            photo_author=r["author"] or "",
            photo_url=r["source_url"] or "",
            subject=r["subject"] or "",
            tier=tiers.get(cid),
            votes=votes.get(cid, {}),
        )
    return items
