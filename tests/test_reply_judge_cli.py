"""Judges that think before they answer, or answer loosely, through the real commands.

`refpool pool judge-agreement` and `refpool pool calibrate` run in-process against the fake
vendor (tests/fake_vendor_replies.py). Each judge style wraps the true verdict (more paint
wins) in its own way; a thinking judge's draft names the loser. The ladder and the agreement
must come out as the truth says, and an unreadable reply must stay unresolved (a judge with
no verdict at all ends the command with exit status 1: tests/test_judge_reasons.py).
"""

from __future__ import annotations

import json

import fake_vendor as fv
import pytest
from factories import add_photo
from judge_fakes import painting

from curation.ratings import record_rating
from refpool import cli
from refpool.core.store import candidates
from refpool.core.store.calibration import ladder

READABLE = [
    "judge-think-inline",
    "judge-think-no-opener",
    "judge-reasoning-content",
    "judge-reasoning-field",
    "judge-thinking-parts",
    "judge-bare",
    "judge-prose",
    "judge-lowercase",
    "judge-mtbench",
]
UNREADABLE = ["judge-think-cut", "judge-unreadable", "judge-contradictory", "judge-tie"]
RED, GREEN = (170, 50, 90), (20, 120, 60)


pytestmark = pytest.mark.usefixtures("fast_retries")  # the shared fixture in conftest


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _candidate(store, cov: float, colour, name: str, round_: int = 1) -> int:
    photo = add_photo(store, f"{name}.jpg", url=f"https://example.org/{name}")
    return candidates.save(
        store,
        {
            "job_key": f"reply/{name}",
            "photo_id": photo,
            "generator": "procedural",
            "round": round_,
            "seed": 0,
            "accepted": 1,
            "coverage": cov,
            "png_sha": store.put_png(painting(cov, colour=colour)),
        },
    )


@pytest.mark.parametrize("style", READABLE + UNREADABLE)
def test_judge_agreement_reads_the_answer_not_the_thought(store, tmp_path, capsys, style):
    # the curators loved the paintings with more paint: a judge that reads true agrees fully
    for i, cov in enumerate((0.40, 0.35)):
        record_rating(store, _candidate(store, cov, RED, f"love{i}"), "alice", "love")
    for i, cov in enumerate((0.10, 0.15)):
        record_rating(store, _candidate(store, cov, GREEN, f"okay{i}"), "alice", "okay")
    with fv.FakeVendor() as vendor:
        models = fv.models_file(tmp_path / "m.json", vendor.base_url, [style])
        code, out, err = run(
            capsys, "pool", "judge-agreement", "--judge", style, "--models-file", models, "--json"
        )
    assert code == (0 if style in READABLE else 1), err  # no verdict at all fails (issue 31)
    result = json.loads(out)
    assert result["pairs"] == 4
    if style in READABLE:
        assert (result["resolved"], result["agreement"], result["okay_wins"]) == (4, 1.0, 0)
    else:  # unresolved, never a 0 or a 0.5
        assert result["resolved"] == 0 and result["agreement"] is None
        assert result["love_wins"] == result["okay_wins"] == result["ties"] == 0


@pytest.mark.parametrize("style", ["judge-think-inline", "judge-reasoning-content"])
def test_a_thinking_judge_does_not_invert_the_ladder(store, tmp_path, capsys, style):
    free = _candidate(store, 0.05, GREEN, "free")  # the policy beats it every time
    ceiling = _candidate(store, 0.45, GREEN, "ceiling")  # the policy never wins
    folder = tmp_path / "policy"
    folder.mkdir()
    for i, cov in enumerate((0.10, 0.20, 0.30)):
        (folder / f"step{i}.png").write_bytes(painting(cov, colour=RED))
    with fv.FakeVendor() as vendor:
        models = fv.models_file(tmp_path / "m.json", vendor.base_url, [style])
        code, out, err = run(
            capsys, "pool", "calibrate", "--paintings", str(folder), "--judge", style,
            "--models-file", models, "--json",
        )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["counts"] == {"ceiling": 1, "rung": 0, "free_win": 1, "unresolved": 0}
    stored = ladder(store)
    assert (stored[free].ladder, stored[free].win_rate) == ("free_win", 1.0)
    assert (stored[ceiling].ladder, stored[ceiling].win_rate) == ("ceiling", 0.0)
