"""Releasing a version freezes it: every row and every file of its release folder is made
once, kept in the store by sha256 (refpool.core.store.releases), and never derived again.

    images/<tier>_<id>.png     the PNG blob the candidate had at release
    sources/<tier>_<id>.js     its program, as text
    metadata.jsonl             one ReleaseRow per image, in candidate-id order
    photo_attribution.json     every reference photo, its licence and who made it
    README.md                  the dataset card

`pool.dataset.export` writes exactly those bytes, and publishing uploads them, so a re-rating,
a re-render or a new calibration after the release changes no version. The licence of each
row follows from its photo; a row whose photo lacks an open licence or attribution stops the
release. A version released before the files were frozen (migration m010) is frozen by
`freeze` at its first export, as that export writes it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from tqdm import tqdm

from pool.catalog import PoolEntry, ineligibility, load_entries
from pool.dataset import provenance
from pool.dataset.card import dataset_card
from pool.dataset.identity import content_hash, equal_version
from pool.dataset.provenance import HUB_LICENCE, ROW_LICENCE, ROW_LICENCE_URL
from pool.dataset.pseudonyms import curator_namer
from pool.dataset.training_prompts import TrainingOptions
from pool.dataset.training_sets import build_training_sets
from pool.diversity.analysis import analyse
from pool.selection.draft import PoolDraft
from pool.selection.versions import VersionError, list_versions, prepare_release, record_release
from refpool.core.contracts import RELEASE_TIERS, PoolVersion, ReleaseRow, release_stem
from refpool.core.errors import RefpoolError
from refpool.core.store import Store, calibration, release_marks, releases, sha256_bytes
from refpool.core.store.releases import FrozenFile

LICENCE_RANK = ["cc0", "cc-by", "cc-by-sa"]
Scores = Mapping[int, float | tuple[float, float | None]]


class ExportError(RefpoolError, ValueError):
    pass


def check_exportable(entries: dict[int, PoolEntry], tiers: dict[int, str]) -> None:
    """Refuse (naming every offender) rather than publish an unlicensed or unrated image.

    A version is judged by the tiers it was released with: re-rating a candidate later does
    not change a version, but a photo's licence or a candidate's gate result does.
    """
    problems = []
    for cid, tier in sorted(tiers.items()):
        entry = entries.get(cid)
        if entry is None:
            problems.append(f"candidate {cid} is not in the store")
        elif tier not in RELEASE_TIERS:
            problems.append(f"candidate {cid}: tier {tier!r} cannot be exported")
        elif why := ineligibility(replace(entry, tier=tier)):
            problems.append(f"candidate {cid}: {why[1]}")
        elif not entry.candidate.program_sha:
            problems.append(f"candidate {cid}: no program is stored, so sources/ would lack it")
    if problems:
        more = f" (+{len(problems) - 10} more)" if len(problems) > 10 else ""
        raise ExportError(
            "cannot export: "
            + "; ".join(problems[:10])
            + more
            + ". Fix the photo records or release a version without these candidates."
        )


def release_row(
    store: Store,
    entry: PoolEntry,
    tier: str,
    version: str,
    score: tuple[float, float | None] | None,
    name_curator: Callable[[str], str] = str,
) -> ReleaseRow:
    c, photo = entry.candidate, entry.photo
    ratings = sorted((name_curator(n), t) for n, t in entry.votes.items())
    name = release_stem(tier, c.id)
    libs, profile = provenance.render_info(store, c)
    row_licence = ROW_LICENCE[photo.licence]
    return ReleaseRow(
        file_name=f"images/{name}.png",
        source_file=f"sources/{name}.js",
        tier=tier,
        subject=photo.subject,
        generator_model=provenance.endpoint_model(store, c),
        refinement_round=c.round,
        hpsv3_mu=score[0] if score else None,
        paint_coverage=c.coverage,
        gate_errors=len(c.violations),
        reference_photo=photo.file_name,
        reference_photo_licence=provenance.PHOTO_LICENCE_CODE[photo.licence],
        reference_photo_attribution=provenance.attribution(photo),
        reference_photo_url=photo.source_url,
        reference_photo_licence_version=photo.licence_version,
        reference_photo_licence_url=provenance.photo_licence_url(photo),
        licence=row_licence,
        licence_url=ROW_LICENCE_URL[row_licence],
        attribution=provenance.adapted_from(photo),
        candidate_id=c.id,
        parent_id=c.parent_id,
        program_source=store.program_source(c.program_sha) if c.program_sha else "",
        program_sha256=c.program_sha or "",
        image_sha256=c.png_sha or "",
        seed=c.seed,
        gate_profile=profile,
        gate_violations=json.dumps([v.to_dict() for v in c.violations]),
        renderer_versions=json.dumps(libs, sort_keys=True),
        critique_history=json.dumps(provenance.critique_history(store, c.id)),
        curator_ratings=[{"curator": n, "tier": t} for n, t in ratings],
        hpsv3_sigma=score[1] if score else None,
        pool_version=version,
        served_model=provenance.served_model(store, c),
        generator_name=c.generator,
    )


def photo_attribution(entries: list[PoolEntry]) -> list[dict[str, Any]]:
    by_id: dict[int, dict[str, Any]] = {}
    for e in entries:
        p = e.photo
        item = by_id.setdefault(
            p.id,
            {
                "file": p.file_name,
                "author": p.author,
                "licence": provenance.PHOTO_LICENCE_CODE[p.licence],
                "licence_version": p.licence_version,
                "licence_url": provenance.photo_licence_url(p),
                "source_url": p.source_url,
                "subject": p.subject,
                "attribution": provenance.attribution(p),
                "paintings_licence": ROW_LICENCE[p.licence],
                "paintings": [],
            },
        )
        item["paintings"].append(f"images/{release_stem(e.tier or '', e.id)}.png")
    return sorted(by_id.values(), key=lambda x: x["file"])


def _put(store: Store, path: str, data: bytes) -> FrozenFile:
    return FrozenFile(path, store.put_blob(releases.blob_kind(path), data), len(data))


def _stored_png(store: Store, cid: int, sha: str) -> FrozenFile:
    """The candidate's PNG blob as it is now, checked against its sha256 (kept, not copied)."""
    path = store.png_path(sha)
    if not path.exists():
        raise ExportError(f"candidate {cid}: PNG {path} is missing; restore it or re-render")
    data = path.read_bytes()
    if sha256_bytes(data) != sha:
        raise ExportError(f"candidate {cid}: PNG {path} is corrupt; restore it or re-render")
    return FrozenFile("", sha, len(data))


def build(
    store: Store,
    pv: PoolVersion,
    diversity: Any,  # the diversity analysis's metrics for the card, or None
    repo_id: str | None = None,
    preference_scores: Scores | None = None,
    scorer: str | None = None,
    progress: bool = False,
    pseudonymise: bool = False,
    training: TrainingOptions | None = None,
) -> tuple[list[ReleaseRow], list[FrozenFile]]:
    """Make every row and file of `pv`'s release from the store as it is now, storing each
    file's bytes as a blob. `preference_scores` (candidate id -> HPSv3 mu, or (mu, sigma),
    from the `scorer` named) default to what `refpool score` stored; null when it never ran.
    `pseudonymise` names curators by their stable pseudonyms (pool/dataset/pseudonyms.py).
    `training` chooses what the training sets hold (pool/dataset/training_sets.py)."""
    if not pv.candidate_ids:
        raise ExportError(f"version {pv.version} is empty; nothing to export")
    tiers = {int(k): v for k, v in pv.tiers.items()}
    found = load_entries(store, tiers)
    check_exportable(found, tiers)
    # Each entry carries the tier it was released with (not today's), as its file name does.
    ordered = [replace(found[c], tier=tiers[c]) for c in sorted(tiers)]
    if preference_scores is None:
        stored = calibration.preferences(store, scorer)
        preference_scores = {c: (r.hpsv3_mu, r.hpsv3_sigma) for c, r in stored.items()}
        scorer = scorer or ", ".join(sorted({r.scorer for r in stored.values()})) or None
    scores = {
        cid: (value if isinstance(value, tuple) else (value, None))
        for cid, value in preference_scores.items()
        if cid in tiers
    }
    rows, files, lines = [], [], []
    name_curator = curator_namer(store, pseudonymise)
    bar = tqdm(ordered, desc="freeze", unit="image", file=sys.stderr, disable=not progress)
    for entry in bar:
        c = entry.candidate
        png = _stored_png(store, c.id, c.png_sha or "")
        row = release_row(store, entry, tiers[c.id], pv.version, scores.get(c.id), name_curator)
        rows.append(row)
        files.append(replace(png, path=row.file_name))
        files.append(_put(store, row.source_file, row.program_source.encode("utf-8")))
        lines.append(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
    files.append(_put(store, "metadata.jsonl", "".join(lines).encode("utf-8")))
    credits = json.dumps(photo_attribution(ordered), indent=1, ensure_ascii=False) + "\n"
    files.append(_put(store, "photo_attribution.json", credits.encode("utf-8")))
    sets = build_training_sets(store, ordered, rows, training)
    files += [_put(store, path, data) for path, data in sets.files()]
    worst = max((ROW_LICENCE[e.photo.licence] for e in ordered), key=LICENCE_RANK.index)
    card = dataset_card(
        store,
        pv,
        ordered,
        HUB_LICENCE[worst],
        diversity,
        repo_id=repo_id,
        scorer=scorer if scores else None,
        pseudonymised=pseudonymise,
        training=sets,
    )
    files.append(_put(store, "README.md", card.encode("utf-8")))
    return rows, sorted(files, key=lambda f: f.path)


def _diversity(store: Store, pv: PoolVersion, with_diversity: bool) -> Any:
    # Measured before the freezing transaction: analysis caches image features as it goes.
    if not with_diversity:
        return None
    return analyse(store, {int(k): v for k, v in pv.tiers.items()}, pv.version).metrics


def freeze(
    store: Store,
    pv: PoolVersion,
    frozen_by: str,
    with_diversity: bool = True,
    repo_id: str | None = None,
    preference_scores: Scores | None = None,
    scorer: str | None = None,
    progress: bool = False,
    training: TrainingOptions | None = None,
) -> None:
    """Freeze an already recorded version that has no frozen files yet (one from before m010)."""
    diversity = _diversity(store, pv, with_diversity)
    with store.transaction():
        rows, files = build(
            store,
            pv,
            diversity,
            repo_id,
            preference_scores,
            scorer,
            progress,
            training=training,
        )
        releases.save(store, pv.version, frozen_by, rows, files, repo_id)


def release(
    store: Store,
    version: str | None = None,
    bump: str = "minor",
    notes: str = "",
    draft: PoolDraft | None = None,
    repo_id: str | None = None,
    with_diversity: bool = True,
    preference_scores: Scores | None = None,
    scorer: str | None = None,
    progress: bool = False,
    pseudonymise_curators: bool = False,
    training: TrainingOptions | None = None,
) -> PoolVersion:
    """Freeze `draft` (default: the latest saved draft) as a new version, with every file of
    its release. `repo_id` is the Hub repo its card's load snippets name (else OWNER/NAME);
    `with_diversity=False` leaves the diversity table out of the card. A release that would
    publish what an earlier version does (pool/dataset/identity.py) is refused, naming it.
    `training` chooses the training sets' system prompt and whether `sft` teaches okay too."""
    pv, params = prepare_release(store, version, bump, notes, draft)
    earlier = list_versions(store)
    diversity = _diversity(store, pv, with_diversity)
    with store.transaction():  # the version and its files exist together or not at all
        record_release(store, pv, params)
        rows, files = build(
            store,
            pv,
            diversity,
            repo_id,
            preference_scores,
            scorer,
            progress,
            pseudonymise_curators,
            training,
        )
        sha = content_hash(store, pv, rows, files)
        if same := equal_version(store, sha, earlier):
            raise VersionError(
                f"nothing to release: {pv.version} would publish exactly what version {same}"
                " does (the same rows, files and card facts). Re-rate, rebuild the draft"
                " (`refpool pool build`) or change what the card states, then release; or"
                f" keep using {same}."
            )
        releases.save(store, pv.version, releases.AT_RELEASE, rows, files, repo_id)
        release_marks.set_content_hash(store, pv.version, sha)
    return pv
