"""The offline demo as a library call: sample photos -> procedural paintings -> a first report.

`refpool demo` (refpool/cli.py) calls `run_demo`, then opens the studio.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generators.batch import generate
from generators.summary import format_summary
from pool.diversity.report import write_report
from refpool.core.store import Store, candidates
from refpool.intake.photos import import_folder

SAMPLES = Path(__file__).resolve().parent / "intake" / "samples"


@dataclass
class DemoResult:
    photos: str  # the import summary line
    generation: str  # the per-model table
    report_path: Path | None  # None when nothing was accepted
    ladder: str = ""  # the heuristic calibration's summary ("" when nothing could be calibrated)


def run_demo(
    store: Store, candidates_per_photo: int = 3, rounds: int = 3, progress: bool = True, log=print
) -> DemoResult:
    """Import the bundled CC BY samples, paint them, and report on their accepted paintings.

    Only the samples are painted, calibrated and reported on: photos of the user's own in the
    same library are left alone (no procedural paintings of them reach their queue).
    Resumable: finished paintings are not redone. `log` gets each step's line as it ends.
    """
    imported = import_folder(store, SAMPLES)
    log(f"photos: {imported.summary()}")
    sample_ids = sorted({p.id for p in imported.imported} | {pid for _, pid in imported.already})
    if not sample_ids:  # never "all photos": that is the user's library
        log("demo: none of the sample photos is in the library (see the refusals above)")
        return DemoResult(imported.summary(), "", None)
    summary = generate(
        store,
        photo_ids=sample_ids,
        generators=("procedural",),
        candidates=candidates_per_photo,
        rounds=rounds,
        concurrency=4,
        progress=progress,
    )
    table = format_summary(summary)
    log(table)
    accepted = [
        cid for pid in sample_ids for cid in candidates.list_ids(store, accepted=True, photo_id=pid)
    ]
    ladder = _calibrate(store, log, accepted)
    report_path = None
    if accepted:  # a first look at diversity, before anyone has rated
        report = write_report(
            store,
            store.home / "report.html",
            dict.fromkeys(accepted, "unrated"),
            "the sample photos' accepted candidates (not yet rated)",
            progress=False,
        )
        report_path = report.html_path
        log(
            f"diversity report: {report_path}  (refpool report, after rating, gives per-tier views)"
        )
    return DemoResult(imported.summary(), table, report_path, ladder)


def _calibrate(store: Store, log, ids: list[int]) -> str:
    """The ladder with the offline heuristic judge, round-0 paintings standing in for a policy,
    over the samples' accepted paintings."""
    from pool.reward.ladder import CalibrationError, calibrate_offline

    try:
        result = calibrate_offline(store, ids=ids)
    except CalibrationError as exc:
        log(f"calibration skipped: {exc}")
        return ""
    log(
        "calibration (heuristic judge; `refpool pool calibrate --paintings DIR` for a real policy):"
    )
    log(result.summary())
    return result.summary()
