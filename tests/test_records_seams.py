"""Typed records at the seams: a generation round reaches SQL only as a RoundResult, and the
judge's agreement is read back from stored verdicts without an event loop."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from factories import add_photo
from judge_fakes import painting
from test_pool_ladder import policy_folder

from curation.ratings import record_rating
from pool.reward.judge_agreement import judge_agreement, stored_judge_agreement
from pool.reward.judge_heuristic import HeuristicJudge
from pool.reward.view import reward_card_lines, stored_agreement
from refpool import cli
from refpool.core.contracts import Critique, RoundResult, Violation
from refpool.core.store import candidates


def _round(photo_id: int, **extra) -> RoundResult:
    return RoundResult(
        job_key=f"seam/{photo_id}/{extra.pop('slot', 0)}",
        run_id=None,
        photo_id=photo_id,
        generator="procedural",
        round=1,
        seed=7,
        outcome="ok",
        **extra,
    )


def test_a_round_result_round_trips_through_its_one_column_mapping(store) -> None:
    photo = add_photo(store)
    result = _round(
        photo,
        accepted=True,
        coverage=0.31,
        png_sha=store.put_png(painting(0.3)),
        violations=[Violation("blank_canvas", "nothing painted", 4)],
        critique=Critique("heuristic", {"fidelity": 6.0}, "more bleed", "s"),
    )
    cid = candidates.save_round(store, result)
    stored = candidates.get(store, cid)
    assert stored is not None and RoundResult.of(stored) == result
    # a redone round is overwritten in full: nothing stale survives
    redone = dataclasses.replace(result, outcome="infra_error", infra_error="browser died")
    redone = dataclasses.replace(redone, accepted=False, coverage=None, critique=None)
    assert candidates.save_round(store, redone, existing=cid) == cid
    again = candidates.get(store, cid)
    assert again is not None and RoundResult.of(again) == redone and candidates.count(store) == 1


def test_a_misspelt_field_never_reaches_sql(store) -> None:
    photo = add_photo(store)
    with pytest.raises(TypeError):
        _round(photo, acepted=True)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown fields"):
        RoundResult.from_dict({**_round(photo).to_dict(), "covrage": 0.2})
    with pytest.raises(TypeError, match="RoundResult"):
        candidates.save_round(store, _round(photo).to_dict())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="covrage"):
        candidates.save(store, {**_round(photo).to_dict(), "covrage": 0.2})
    with pytest.raises(dataclasses.FrozenInstanceError):
        _round(photo).outcome = "ok"  # type: ignore[misc]
    assert candidates.count(store) == 0


def _rated(store, cov: float, colour, tier: str) -> int:
    photo = add_photo(store, f"p{cov}{colour}.jpg", url=f"https://example.org/{cov}{colour}")
    png = store.put_png(painting(cov, colour=colour))
    cid = candidates.save_round(
        store, _round(photo, slot=f"{cov}{colour}", accepted=True, coverage=cov, png_sha=png)
    )
    record_rating(store, cid, "alice", tier)
    return cid


def test_stored_verdicts_give_the_same_agreement_as_asking_the_judge(store) -> None:
    red, green = (170, 50, 90), (20, 120, 60)
    for cov, colour, tier in [(0.4, red, "love"), (0.1, red, "love"), (0.3, green, "okay")]:
        _rated(store, cov, colour, tier)
    judge = HeuristicJudge()
    before = stored_judge_agreement(store, judge.name, judge.key, judge.heuristic)
    assert before.pairs == 2 and before.resolved == 0  # nothing judged yet, nothing made up
    live = asyncio.run(judge_agreement(store, judge))
    assert live.resolved == 2 and live.love_wins == 1 and live.okay_wins == 1
    stored = stored_judge_agreement(store, judge.name, judge.key, judge.heuristic)
    assert stored == live
    assert asyncio.run(judge_agreement(store, judge, cached_only=True)) == live


def test_the_card_reads_agreement_inside_a_running_loop_without_asyncio_run(
    store, capsys, tmp_path, monkeypatch
) -> None:
    red, green = (170, 50, 90), (20, 120, 60)
    ids = [_rated(store, 0.4, red, "love"), _rated(store, 0.1, green, "okay")]
    live = asyncio.run(judge_agreement(store, HeuristicJudge()))
    folder = policy_folder(tmp_path, [0.10, 0.20])
    assert cli.main(["pool", "calibrate", "--judge", "heuristic", "--paintings", str(folder)]) == 0
    capsys.readouterr()

    async def card() -> tuple[list[str], object]:
        # a nested asyncio.run (in a thread or not) would fail here
        monkeypatch.setattr(asyncio, "run", lambda *a, **k: pytest.fail("asyncio.run called"))
        return reward_card_lines(store, ids), stored_agreement(store)

    lines, agreement = asyncio.run(card())
    assert agreement == live
    assert any(f"{live.agreement:.0%}" in line for line in lines)
