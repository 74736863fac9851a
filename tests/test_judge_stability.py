"""Is the judge stable? `judge-agreement --repeats K` asks pairs again in both orders and
reports the flip rate and the position bias beside agreement; a rerun pays for nothing twice."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from judge_fakes import CoverageJudge, judge_models_file
from test_pool_judge import _rated

from generators.llm import Endpoints
from generators.loopback import LoopbackOpenAI
from pool.catalog import load_entries
from pool.dataset.card_reward import reward_card_lines
from pool.reward.judge_agreement import judge_agreement
from pool.reward.judge_config import make_judge
from pool.reward.verdict_progress import VerdictProgress, spend_lines
from refpool.core.store import calibration, model_calls
from refpool.core.store.calibration import LadderEntry

RED, GREEN = (170, 50, 90), (20, 120, 60)


class FickleJudge(CoverageJudge):
    """Prefers more paint the first time it sees a request, the other painting after that."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        super().__init__()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = super().answer(body)
        key = json.dumps(body["messages"], sort_keys=True)
        self.seen[key] += 1
        if self.seen[key] > 1:
            winner = json.loads(reply["content"])["winner"]
            reply["content"] = json.dumps({"winner": "AB"[winner == "A"], "reason": "changed"})
        return reply


def agreement(store, tmp_path, base_url: str, repeats: int, progress=None):
    async def go():
        endpoints = Endpoints()
        try:
            path = judge_models_file(tmp_path / "m.json", base_url)
            judge = make_judge(store, None, path, endpoints)
            return await judge_agreement(store, judge, repeats=repeats, progress=progress)
        finally:
            await endpoints.close()

    return asyncio.run(go())


def test_a_judge_that_changes_its_mind_flips_and_a_rerun_asks_nothing_again(store, tmp_path):
    _rated(store, 0.4, RED, "love")
    _rated(store, 0.1, GREEN, "okay")
    with FickleJudge() as server:
        bar = VerdictProgress("test", enabled=False)
        result = agreement(store, tmp_path, server.base_url, repeats=2, progress=bar)
        assert result.agreement == 1.0  # the first asking: love over okay, both orders
        s = result.stability
        assert s is not None and (s.repeats, s.pairs) == (2, 1)
        assert (s.flips, s.comparisons, s.flip_rate) == (4, 4, 1.0)  # every verdict changed
        assert s.position_bias == 0.0  # each asking picked the same painting in both orders
        assert len(server.requests) == 2 + 2 * 2  # the first asking, then 2 repeats x 2 orders
        assert dict(bar.counts) == {"done": 3}
        asked = len(server.requests)
        again = agreement(store, tmp_path, server.base_url, repeats=2, progress=bar)
        assert again.stability == s and len(server.requests) == asked  # all reused
        assert bar.counts["reused"] == 3
    # What the run spent, per model: the six calls (the loopback reports tokens, no price).
    spent = spend_lines(store, 0)
    assert spent[0].split() == ["model", "calls", "tokens", "in", "out", "cost"]
    row = spent[1].split()
    assert row[:2] == ["loopback-vlm", "6"] and row[-2:] == ["not", "given"]
    assert spend_lines(store, model_calls.last_id(store)) == [
        "judge calls: none made (every verdict was stored or offline)"
    ]
    assert "flip rate 1.00" in result.summary()
    assert result.to_dict()["stability"]["flip_rate"] == 1.0


def test_a_judge_that_always_says_a_shows_position_bias_not_flips(store, tmp_path):
    _rated(store, 0.4, RED, "love")
    _rated(store, 0.1, GREEN, "okay")
    always_a = {"content": json.dumps({"winner": "A", "reason": "the first one"})}
    with LoopbackOpenAI(default=lambda body: always_a) as server:
        result = agreement(store, tmp_path, server.base_url, repeats=1)
    s = result.stability
    assert result.ties == 1 and s is not None
    assert (s.flip_rate, s.position_bias, s.first_slot_rate) == (0.0, 1.0, 1.0)


def test_the_command_shows_progress_stability_and_what_it_spent(store, capsys):
    from refpool import cli

    _rated(store, 0.3, RED, "love")
    _rated(store, 0.2, GREEN, "okay")
    code = cli.main(["pool", "judge-agreement", "--judge", "heuristic", "--repeats", "2"])
    captured = capsys.readouterr()
    assert code == 0
    assert "stability: 1 pairs asked again 2x in both orders: flip rate 0.00" in captured.out
    assert "verdicts: 3 done, 0 failed, 0 reused" in captured.err
    assert "judge calls: none made" in captured.err
    code = cli.main(["pool", "judge-agreement", "--judge", "heuristic", "--repeats", "2"])
    assert "verdicts: 0 done, 0 failed, 3 reused" in capsys.readouterr().err


def test_the_card_states_the_judges_stability_on_the_release_pairs(store, tmp_path):
    love = _rated(store, 0.4, RED, "love")
    okay = _rated(store, 0.1, GREEN, "okay")
    entries = list(load_entries(store).values())
    with FickleJudge() as server:
        agreement(store, tmp_path, server.base_url, repeats=0)
        key = calibration.all_pairs(store)[0].judge
        for cid in (love, okay):  # the card speaks of judges that placed the references
            entry = LadderEntry(cid, "loopback-vlm", False, 0.5, 2, 0, "rung", judge_key=key)
            calibration.save_ladder_entry(store, entry)
        before = "\n".join(reward_card_lines(store, entries))
        assert "stability is not measured" in before and "--repeats 2" in before
        agreement(store, tmp_path, server.base_url, repeats=1)
    text = "\n".join(reward_card_lines(store, entries))
    assert "changed 2 of 2 verdicts (flip rate 100%)" in text
    assert "in 0% of its resolved askings both orders picked the same slot" in text
