"""Released pool versions: frozen, semver-named manifests in `pool_versions`.

A version is immutable once released: the RL environment pins it (as a Hub tag vX.Y.Z).
Releasing (`pool.dataset.release.release`, which also freezes every file) re-checks the draft against the current ratings and licences, so a candidate
rejected or a photo found unlicensed after `pool build` cannot slip into a release.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pool.catalog import ineligibility, load_entries
from pool.selection import diff_reasons
from pool.selection.diff_reasons import Change
from pool.selection.draft import PoolDraft, latest_draft
from refpool.core.contracts import PoolVersion
from refpool.core.errors import RefpoolError
from refpool.core.store import Store, candidates
from refpool.core.store.calibration import ladder_classes

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
DRAFT = "draft"


class VersionError(RefpoolError, ValueError):
    pass


def parse_semver(version: str) -> tuple[int, int, int]:
    m = SEMVER.match(version.strip().removeprefix("v"))
    if not m:
        raise VersionError(f"{version!r} is not a version: use MAJOR.MINOR.PATCH, e.g. 1.0.0")
    return int(m[1]), int(m[2]), int(m[3])


def list_versions(store: Store) -> list[PoolVersion]:
    rows = store.query("SELECT manifest, created_at FROM pool_versions")
    versions = []
    for r in rows:
        data = json.loads(r["manifest"])
        data["created_at"] = data.get("created_at") or r["created_at"]
        versions.append(PoolVersion.from_dict(data))
    return sorted(versions, key=lambda v: parse_semver(v.version))


def get_version(store: Store, version: str) -> PoolVersion:
    """A released version by name ("1.2.0" or "v1.2.0"), or "latest"."""
    versions = list_versions(store)
    if version == "latest":
        if not versions:
            raise VersionError("no version has been released yet: run `refpool pool release`")
        return versions[-1]
    wanted = version.strip().removeprefix("v")
    for v in versions:
        if v.version == wanted:
            return v
    known = ", ".join(v.version for v in versions) or "none yet"
    raise VersionError(f"no pool version {version!r} (released: {known})")


def next_version(store: Store, bump: str = "minor") -> str:
    versions = list_versions(store)
    if not versions:
        return "1.0.0"
    major, minor, patch = parse_semver(versions[-1].version)
    if bump == "major":
        return f"{major + 1}.0.0"
    if bump == "minor":
        return f"{major}.{minor + 1}.0"
    if bump == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise VersionError(f"the version bump must be major, minor or patch (got {bump!r})")


def _validate_against_store(store: Store, tiers: dict[int, str]) -> None:
    """Refuse a draft that the current ratings, gate results or licences no longer allow."""
    entries = load_entries(store, tiers)
    bands = ladder_classes(store, [c for c, t in tiers.items() if t == "rung"])
    problems = []
    for cid, tier in sorted(tiers.items()):
        entry = entries.get(cid)
        if entry is None:
            problems.append(f"{cid}: no such candidate")
        elif tier == "rung" and entry.tier != "reject":
            # A rung's tier is calibration's band, not a rating: check that, then the rest.
            if bands.get(cid) != "rung":
                problems.append(f"{cid}: drafted as rung, now {bands.get(cid) or 'uncalibrated'}")
            elif why := ineligibility(replace(entry, tier="rung")):
                problems.append(f"{cid}: {why[1]}")
        elif why := ineligibility(entry):
            problems.append(f"{cid}: {why[1]}")
        elif entry.tier != tier:
            problems.append(f"{cid}: drafted as {tier}, now rated {entry.tier}")
    if problems:
        shown = "; ".join(problems[:10]) + (
            f" (+{len(problems) - 10} more)" if len(problems) > 10 else ""
        )
        raise VersionError(
            f"the selection no longer matches the store: {shown}."
            " Rebuild it with `refpool pool build`."
        )


def prepare_release(
    store: Store,
    version: str | None = None,
    bump: str = "minor",
    notes: str = "",
    draft: PoolDraft | None = None,
) -> tuple[PoolVersion, dict[str, Any]]:
    """Check that `draft` (default: the latest saved draft) can be released as a new version;
    return its manifest and selection params, not yet stored.

    `pool.dataset.release.release` records them together with the frozen release files."""
    draft = draft or latest_draft(store)
    if draft is None:
        raise VersionError("there is no draft to release: run `refpool pool build` first")
    if not draft.candidate_ids:
        raise VersionError("the draft is empty; an empty pool cannot be released")
    name = version.strip().removeprefix("v") if version else next_version(store, bump)
    new = parse_semver(name)
    existing = list_versions(store)
    if any(v.version == name for v in existing):
        raise VersionError(
            f"version {name} already exists; versions are immutable, pick a new one",
            hint="choose a version",
        )
    if existing and new <= parse_semver(existing[-1].version):
        raise VersionError(
            f"version {name} is not newer than the latest, {existing[-1].version}",
            hint="choose a version",
        )
    _validate_against_store(store, draft.tiers)
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return draft.to_pool_version(name, notes=notes, created_at=created), draft.params


def record_release(store: Store, pv: PoolVersion, params: dict[str, Any]) -> None:
    """Store a prepared version's manifest (inside the transaction that freezes its files)."""
    store.insert(
        "pool_versions",
        {
            "version": pv.version,
            "manifest": pv.to_dict(),
            "notes": pv.notes,
            "params": params,
            "created_at": pv.created_at,
        },
    )


def version_params(store: Store, version: str) -> dict[str, Any]:
    rows = store.query("SELECT params FROM pool_versions WHERE version = ?", (version,))
    return json.loads(rows[0]["params"]) if rows else {}


@dataclass(frozen=True)
class VersionDiff:
    a: str
    b: str
    added: list[int]
    removed: list[int]
    retiered: list[tuple[int, str, str]]  # (candidate id, tier in a, tier in b)
    changes: list[Change] = field(default_factory=list)  # each with its reason (diff_versions)

    def to_dict(self) -> dict[str, Any]:
        retiered = [{"candidate_id": c, "from": f, "to": t} for c, f, t in self.retiered]
        return {
            "a": self.a,
            "b": self.b,
            "added": self.added,
            "removed": self.removed,
            "retiered": retiered,
            "changes": [c.to_dict() for c in self.changes],
        }

    def summary(self) -> str:
        counts = f"+{len(self.added)} -{len(self.removed)} ~{len(self.retiered)} re-tiered"
        lines = [f"{self.a} -> {self.b}: {counts}"]
        if self.changes:
            return "\n".join([*lines, *(c.line() for c in self.changes)])
        lines += [f"  + {c}" for c in self.added]
        lines += [f"  - {c}" for c in self.removed]
        lines += [f"  ~ {c}: {f} -> {t}" for c, f, t in self.retiered]
        return "\n".join(lines)


def resolve_tiers(store: Store, name: str) -> dict[int, str]:
    """candidate id -> tier for a released version, or the latest draft for "draft"."""
    if name == DRAFT:
        draft = latest_draft(store)
        if draft is None:
            raise VersionError("there is no draft yet: run `refpool pool build`")
        return dict(draft.tiers)
    return {int(k): v for k, v in get_version(store, name).tiers.items()}


def diff_tiers(
    a: dict[int, str], b: dict[int, str], a_name: str = "a", b_name: str = "b"
) -> VersionDiff:
    return VersionDiff(
        a=a_name,
        b=b_name,
        added=sorted(set(b) - set(a)),
        removed=sorted(set(a) - set(b)),
        retiered=[(c, a[c], b[c]) for c in sorted(set(a) & set(b)) if a[c] != b[c]],
    )


def diff_versions(store: Store, a: str, b: str) -> VersionDiff:
    """What changed from a to b (versions, or "draft"), each change with its reason."""
    at, bt = resolve_tiers(store, a), resolve_tiers(store, b)
    names = [n if n == DRAFT else get_version(store, n).version for n in (a, b)]
    changes = diff_reasons.explain(store, (names[0], at), (names[1], bt))
    return replace(diff_tiers(at, bt, a, b), changes=changes)


def candidate_ids_for(store: Store, which: str = "all") -> list[int]:
    """all: every accepted candidate with a render; pool: the latest draft; else a version."""
    if which == "all":
        return candidates.list_ids(store, accepted=True, rendered=True)
    return sorted(resolve_tiers(store, DRAFT if which == "pool" else which))
