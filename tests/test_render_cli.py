"""`refpool render` and `refpool serve-renderer`: the contracts other tools rely on."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
HERE = Path(__file__).parent
REFPOOL = [sys.executable, "-c", "import sys; from refpool.cli import main; sys.exit(main())"]


def run_cli(
    *args: str, env: dict | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*REFPOOL, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def test_render_json_contract_and_exit_status(tmp_path, refpool_home):
    (tmp_path / "empty.js").write_text("")
    (tmp_path / "junk.js").write_bytes(bytes(range(256)) * 4)
    good = HERE / "sketches" / "trivial.js"
    hostile = HERE / "hostile" / "aliased_rect.js"
    files = [good, hostile, tmp_path / "missing.js", tmp_path / "empty.js", tmp_path / "junk.js"]
    proc = run_cli(
        "render", *map(str, files), "--json", "--out-dir", str(tmp_path / "out"), "--seed", "3"
    )
    assert proc.returncode == 1, proc.stderr
    rows = {Path(r["file"]).name: r for r in map(json.loads, proc.stdout.splitlines())}
    assert set(rows) == {"trivial.js", "aliased_rect.js", "missing.js", "empty.js", "junk.js"}
    for row in rows.values():
        assert {
            "file",
            "accepted",
            "violations",
            "coverage",
            "png",
            "render_ms",
            "queued_ms",
            "infra_error",
        } <= set(row)
    assert rows["trivial.js"]["accepted"] and rows["trivial.js"]["coverage"] > 0.005
    assert Path(rows["trivial.js"]["png"]).read_bytes().startswith(b"\x89PNG")
    assert rows["trivial.js"]["png"] == str(tmp_path / "out" / "trivial.png")
    assert [v["code"] for v in rows["aliased_rect.js"]["violations"]] == ["p5_primitive"]
    assert rows["missing.js"]["violations"][0]["message"].startswith("file not found")
    assert rows["empty.js"]["violations"][0]["code"] == "empty_program"
    assert "binary" in rows["junk.js"]["violations"][0]["message"]
    # renders are recorded in the store
    db = sqlite3.connect(refpool_home / "refpool.db")
    recorded = db.execute("SELECT accepted, png_sha FROM renders ORDER BY id").fetchall()
    assert sorted(a for a, _ in recorded) == [0, 0, 1]


def test_render_ms_is_time_on_a_slot_and_queueing_is_separate(tmp_path, refpool_home):
    """With one slot, files wait their turn: that wait is queued_ms, not render_ms."""
    source = (HERE / "sketches" / "trivial.js").read_text()
    files = []
    for n in range(4):
        path = tmp_path / f"s{n}.js"
        path.write_text(source + f"\n// copy {n}\n")
        files.append(str(path))
    started = time.perf_counter()
    proc = run_cli("render", *files, "--json", "--slots", "1", "--no-cache")
    wall_ms = (time.perf_counter() - started) * 1000
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert all(row["accepted"] for row in rows)
    # One slot renders one file at a time, so the on-slot times add up to less than the
    # whole run; queueing counted in would add up to far more.
    assert sum(row["render_ms"] for row in rows) < wall_ms
    assert max(row["queued_ms"] for row in rows) > 0


def test_render_all_accepted_exits_zero_with_summary(refpool_home):
    proc = run_cli("render", str(HERE / "sketches" / "trivial.js"))
    assert proc.returncode == 0, proc.stderr
    assert "1 rendered: 1 accepted, 0 rejected, 0 infrastructure failures" in proc.stderr


def test_render_reports_infrastructure_failure_as_exit_3(refpool_home):
    trivial = str(HERE / "sketches" / "trivial.js")
    proc = run_cli("render", trivial, "--json", env={"REFPOOL_CHROMIUM": "/nonexistent/chromium"})
    assert proc.returncode == 3
    assert "REFPOOL_CHROMIUM" in proc.stderr and "Traceback" not in proc.stderr


def test_demo_runs_offline_and_resumes(refpool_home):
    """The README's main job, small: samples -> procedural paintings -> report; rerun is free."""
    args = ("demo", "--no-studio", "--no-progress", "--candidates", "1", "--rounds", "1")
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    assert "3 candidates (3 new this run), 3 accepted" in first.stdout
    assert (refpool_home / "report.html").read_text().startswith("<!doctype html>")
    again = run_cli(*args)
    assert again.returncode == 0 and "(0 new this run)" in again.stdout


def test_env_pixels_reaches_the_renderer_of_serve_renderer(monkeypatch, refpool_home):
    """`--env-pixels` is the service's RenderConfig, not a flag read and dropped."""
    from refpool.cli import main
    from renderer import service

    served = {}
    monkeypatch.setattr(service, "serve", lambda backend, *a: served.update(c=backend.renderer))
    for argv, expected in ((["serve-renderer", "--env-pixels"], True), (["serve-renderer"], False)):
        assert main(argv) == 0
        assert served["c"].config.env_pixels is expected
