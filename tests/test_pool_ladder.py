"""Calibration: the ladder classes from a loopback VLM judge, the stand-in policy, the summary
when there is no rung, and resume after `kill -9` of a real `refpool pool calibrate`."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from factories import add_photo
from judge_fakes import CoverageJudge, judge_models_file, painting, request_images

from pool.reward.ladder import Painting, ladder_class, spread_by_coverage
from refpool import cli
from refpool.core.store import candidates, sha256_bytes
from refpool.core.store.calibration import ladder

RED, GREEN = (170, 50, 90), (20, 120, 60)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def add(store, cov: float, colour=GREEN, round_: int = 1, name: str = "") -> int:
    photo = add_photo(store, f"{name or cov}.jpg", url=f"https://example.org/{name or cov}")
    return candidates.save(
        store,
        {
            "job_key": f"ladder/{cov}/{colour}/{round_}/{name}",
            "photo_id": photo,
            "generator": "procedural",
            "round": round_,
            "seed": 0,
            "accepted": 1,
            "coverage": cov,
            "png_sha": store.put_png(painting(cov, colour=colour)),
        },
    )


def policy_folder(tmp_path: Path, coverages: list[float]) -> Path:
    folder = tmp_path / "film"
    folder.mkdir()
    for i, cov in enumerate(coverages):
        (folder / f"step{i:03d}.png").write_bytes(painting(cov, colour=RED))
    return folder


def test_ladder_class_boundaries():
    assert ladder_class(0.2499) == "ceiling"
    assert ladder_class(0.25) == ladder_class(0.5) == ladder_class(0.75) == "rung"
    assert ladder_class(0.7501) == "free_win"
    assert ladder_class(None) is None


def test_paintings_are_spread_evenly_over_coverage():
    ps = [Painting(str(i), b"", i / 10) for i in range(11)]
    assert [p.label for p in spread_by_coverage(ps, 3)] == ["0", "5", "10"]
    assert len(spread_by_coverage(ps, 20)) == 11


def test_calibrate_sorts_candidates_into_the_ladder(store, capsys, tmp_path):
    free = add(store, 0.05)  # the policy beats it every time
    rung = add(store, 0.25)  # wins 2 of 4
    ceiling = add(store, 0.45)  # never wins
    biased = add(store, 0.20)  # one equal pair: the judge's position bias makes it a tie
    # 0.0: blank, the gate would zero it; of the other seven, every second one is sampled
    folder = policy_folder(tmp_path, [0.0, 0.10, 0.12, 0.20, 0.22, 0.30, 0.35, 0.40])
    with CoverageJudge() as server:
        models = judge_models_file(tmp_path / "m.json", server.base_url)
        code, out, err = run(
            capsys, "pool", "calibrate", "--paintings", str(folder), "--samples", "4",
            "--models-file", models, "--json",
        )  # fmt: skip
        assert code == 0, err
        assert len(server.requests) == 4 * 4 * 2
    result = json.loads(out)
    assert result["dropped_below_gate"] == ["step000.png"]
    assert [p["coverage"] for p in result["paintings"]] == [0.1, 0.2, 0.3, 0.4]
    assert result["counts"] == {"ceiling": 1, "rung": 2, "free_win": 1, "unresolved": 0}
    assert result["advice"] is None and not result["heuristic"]
    stored = ladder(store)
    assert (stored[free].win_rate, stored[free].ladder) == (1.0, "free_win")
    assert (stored[rung].win_rate, stored[rung].ladder) == (0.5, "rung")
    assert (stored[ceiling].win_rate, stored[ceiling].ladder) == (0.0, "ceiling")
    # 0.10 loses, 0.20 ties (both orders said A), 0.30 and 0.40 win: (0 + .5 + 1 + 1) / 4
    assert (stored[biased].win_rate, stored[biased].ladder) == (0.625, "rung")
    assert stored[biased].position_bias == 1 and stored[rung].position_bias == 0
    assert all(e.resolved == 4 and e.judge == "loopback-vlm" for e in stored.values())
    assert stored[free].policy == f"paintings in {folder}"


def test_the_stand_in_policy_and_the_heuristic_judge_are_labelled(store, capsys):
    for i, cov in enumerate((0.10, 0.12, 0.15)):  # round 0: the stand-in policy
        add(store, cov, RED, round_=0, name=f"r0-{i}")
    add(store, 0.45, name="strong")
    code, out, err = run(capsys, "pool", "calibrate", "--judge", "heuristic")
    assert code == 0, err
    assert "stand-in: refpool's round-0 candidates" in err
    assert "judge heuristic (offline measurements, not a model)" in out
    entries = ladder(store)
    assert len(entries) == 4  # a round-0 candidate is never compared with its own painting
    assert all(e.heuristic and e.judge == "heuristic" for e in entries.values())
    assert all(e.resolved == (3 if e.candidate_id == 4 else 2) for e in entries.values())


def test_no_rung_says_what_to_do(store, capsys, tmp_path):
    add(store, 0.45, name="strong")
    add(store, 0.40, name="strong2")
    folder = policy_folder(tmp_path, [0.10, 0.20])
    with CoverageJudge() as server:
        models = judge_models_file(tmp_path / "m.json", server.base_url)
        code, out, err = run(
            capsys, "pool", "calibrate", "--paintings", str(folder), "--models-file", models
        )
    assert code == 0, err
    assert "ceiling  (win rate < 0.25)         2" in out
    assert "No rung" in out and "generate weaker references" in out


def test_calibrate_explains_bad_input(store, capsys, tmp_path):
    code, _, err = run(capsys, "pool", "calibrate", "--judge", "heuristic")
    assert code == 1 and "--paintings DIR" in err
    blank = policy_folder(tmp_path, [0.0, 0.0])
    add(store, 0.3)
    code, _, err = run(
        capsys, "pool", "calibrate", "--judge", "heuristic", "--paintings", str(blank)
    )
    assert code == 1 and "gate" in err


def _ok_pairs(db_path: Path) -> dict[str, int]:
    with sqlite3.connect(db_path) as db:
        rows = db.execute(
            "SELECT job_key, COUNT(*) FROM model_calls WHERE purpose = 'judge' AND outcome = 'ok'"
            " GROUP BY job_key"
        ).fetchall()
    return dict(rows)


def test_a_killed_calibration_resumes_without_paying_twice(store, tmp_path):
    for cov in (0.05, 0.25, 0.45):
        add(store, cov)
    folder = policy_folder(tmp_path, [0.10, 0.20, 0.30])
    expected = 3 * 3 * 2
    env = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    argv = [sys.executable, "-m", "refpool.cli", "pool", "calibrate", "--paintings", str(folder)]
    with CoverageJudge(delay=0.2) as server:
        env["REFPOOL_MODELS"] = judge_models_file(tmp_path / "m.json", server.base_url, 1)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            while len(_ok_pairs(store.db_path)) < 5 and proc.poll() is None:
                time.sleep(0.05)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert proc.returncode == -signal.SIGKILL
        paid = _ok_pairs(store.db_path)
        assert 5 <= len(paid) < expected
        before = len(server.requests)
        server.delay = 0.0
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        asked_again = server.requests[before:]
    reasked = {tuple(sha256_bytes(p)[:16] for p in request_images(b)) for b in asked_again}
    paid_pairs = {tuple(k.split("/")[-2:]) for k in paid}
    assert not reasked & paid_pairs  # nothing paid for before the kill was asked again
    final = _ok_pairs(store.db_path)
    assert len(final) == expected and set(final.values()) == {1}
    assert "rung" in done.stdout and len(ladder(store)) == 3


def test_a_judge_that_refuses_for_good_is_asked_once_and_nothing_is_classed(
    store, capsys, tmp_path
):
    cid = add(store, 0.3)
    folder = policy_folder(tmp_path, [0.10, 0.20, 0.40])
    with CoverageJudge() as server:
        server.default = lambda body: {"status": 404}  # e.g. a model id the server lacks
        models = judge_models_file(tmp_path / "m.json", server.base_url, concurrency=1)
        code, out, err = run(
            capsys, "pool", "calibrate", "--paintings", str(folder), "--models-file", models
        )
        assert len(server.requests) == 1  # a permanent error disables the judge for the run
    assert code == 1 and "unresolved (judge gave no verdict)     1" in out
    assert "was disabled for this run: HTTP 404" in err and '"model"' in err
    entry = ladder(store)[cid]
    assert entry.ladder is None and entry.win_rate is None and entry.resolved == 0


def test_a_judge_stopped_mid_run_fails_the_command_and_a_rerun_finishes(store, capsys, tmp_path):
    ids = [add(store, 0.05), add(store, 0.45)]
    folder = policy_folder(tmp_path, [0.10, 0.30])
    argv = ["pool", "calibrate", "--paintings", str(folder)]
    with CoverageJudge() as server:
        answer = server.default
        # three verdicts, then the key stops working: the judge is stopped for the run
        server.default = lambda body: answer(body) if len(server.requests) <= 3 else {"status": 401}
        models = judge_models_file(tmp_path / "m.json", server.base_url, concurrency=1)
        code, out, err = run(capsys, *argv, "--models-file", models)
        assert len(server.requests) == 4  # the first refusal stopped it
        assert code == 1, out
        last = err.strip().splitlines()[-1]  # said last, after the partial result
        assert last.startswith("error: judge loopback-judge (loopback-vlm at")
        assert "was disabled for this run: HTTP 401" in last and "check the key" in last
        assert "The result above is incomplete: " in last and " candidates got no verdict" in last
        assert "a rerun pays only for the rest" in last
        assert "judge loopback-vlm" in out  # the partial result is still printed

        server.default = answer  # the key fixed
        code, out, err = run(capsys, *argv, "--models-file", models)
        assert code == 0, err
        assert len(server.requests) == 4 + 2 * 2 * 2 - 3  # the three verdicts were not repaid
    assert {e.ladder for cid, e in ladder(store).items() if cid in ids} == {"free_win", "ceiling"}


def test_the_figures_a_report_shows_come_from_what_was_stored(store, capsys, tmp_path):
    from pool.reward.view import ladder_figures, preference_figures, stored_agreement

    ids = [add(store, 0.05), add(store, 0.45), add(store, 0.3)]
    assert ladder_figures(store, ids).calibrated == 0
    assert stored_agreement(store) is None
    folder = policy_folder(tmp_path, [0.10, 0.20])
    code, _, err = run(
        capsys, "pool", "calibrate", "--judge", "heuristic", "--paintings", str(folder)
    )
    assert code == 0, err
    figures = ladder_figures(store, ids)
    assert figures.calibrated == 3 and figures.heuristic and sum(figures.counts.values()) == 3
    assert figures.judges == ["heuristic (offline measurements, not a model)"]
    assert set(figures.per_candidate) == set(ids)
    prefs = preference_figures(store, ids)
    assert prefs.scored == 0 and prefs.mu_median is None and "null" in prefs.note
    agreement = stored_agreement(store)
    assert agreement is not None and agreement.heuristic and agreement.pairs == 0
