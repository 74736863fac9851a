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
    """Import the bundled CC BY samples, paint them, and report on every accepted painting.

    Resumable: finished paintings are not redone. `log` gets each step's line as it ends.
    """
    imported = import_folder(store, SAMPLES)
    log(f"photos: {imported.summary()}")
    summary = generate(
        store,
        generators=("procedural",),
        candidates=candidates_per_photo,
        rounds=rounds,
        concurrency=4,
        progress=progress,
    )
    table = format_summary(summary)
    log(table)
    ladder = _calibrate(store, log)
    accepted = candidates.list_ids(store, accepted=True)
    report_path = None
    if accepted:  # a first look at diversity, before anyone has rated
        report = write_report(
            store,
            store.home / "report.html",
            dict.fromkeys(accepted, "unrated"),
            "all accepted candidates (not yet rated)",
            progress=False,
        )
        report_path = report.html_path
        log(
            f"diversity report: {report_path}  (refpool report, after rating, gives per-tier views)"
        )
    return DemoResult(imported.summary(), table, report_path, ladder)


def _calibrate(store: Store, log) -> str:
    """The ladder with the offline heuristic judge, round-0 paintings standing in for a policy."""
    from pool.reward.ladder import CalibrationError, calibrate_offline

    try:
        result = calibrate_offline(store)
    except CalibrationError as exc:
        log(f"calibration skipped: {exc}")
        return ""
    log(
        "calibration (heuristic judge; `refpool pool calibrate --paintings DIR` for a real policy):"
    )
    log(result.summary())
    return result.summary()
