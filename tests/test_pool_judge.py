"""The pairwise judge: the env's semantics over a loopback VLM, the heuristic judge, and the
judge's agreement with the curators' love over okay."""

from __future__ import annotations

import asyncio
import json

import pytest
from factories import add_photo
from judge_fakes import CoverageJudge, judge_models_file, painting

from curation.ratings import record_rating
from generators.llm import Endpoints
from pool.reward.judge import (
    DEFAULT_JUDGE_MODEL,
    JUDGE_MAX_TOKENS,
    JudgeError,
    judge_pair,
    parse_verdict,
)
from pool.reward.judge_agreement import judge_agreement
from pool.reward.judge_config import judge_names, make_judge
from pool.reward.judge_heuristic import HeuristicJudge
from refpool.core.store import candidates, model_calls


def run(coro):
    return asyncio.run(coro)


async def _pairs(store, base_url, tmp_path, pairs):
    endpoints = Endpoints()
    try:
        judge = make_judge(store, None, judge_models_file(tmp_path / "m.json", base_url), endpoints)
        return judge, [await judge_pair(store, judge, x, y) for x, y in pairs]
    finally:
        await endpoints.close()


def test_both_orders_decide_and_a_disagreement_is_a_tie(store, tmp_path):
    strong, weak = painting(0.4), painting(0.1)
    even_a, even_b = painting(0.2), painting(0.2, colour=(20, 120, 60), x0=10)
    with CoverageJudge() as server:
        judge, (win, loss, tie) = run(
            _pairs(
                store, server.base_url, tmp_path, [(strong, weak), (weak, strong), (even_a, even_b)]
            )
        )
        bodies = list(server.requests)
    assert (win.x_first, win.y_first, win.score, win.position_bias) == ("A", "B", 1.0, False)
    assert (loss.x_first, loss.y_first, loss.score) == ("B", "A", 0.0)
    # equal paintings: the judge picks slot A in both orders, so the painting wins one and
    # loses one: a tie worth 0.5, flagged as position bias
    assert (tie.x_first, tie.y_first, tie.score, tie.position_bias) == ("A", "A", 0.5, True)
    # three pairs in both orders; (weak, strong) is (strong, weak) reversed: both replies reused
    assert len(bodies) == 4
    body = bodies[0]
    assert body["temperature"] == 0 and body["max_tokens"] == JUDGE_MAX_TOKENS == 220
    schema = body["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["winner", "reason"]  # the verdict comes first
    assert schema["properties"]["winner"]["enum"] == ["A", "B"]
    text = body["messages"][0]["content"][0]["text"]
    assert "better watercolour painting" in text and "only how they are painted" in text
    assert "20 words" in text
    # every call is logged, images by sha256 only, under a job key naming both PNGs
    logged = store.query("SELECT COUNT(*) FROM model_calls WHERE purpose = 'judge'")[0][0]
    assert logged == 4 and judge.key.startswith("loopback-vlm#")
    first = model_calls.get(store, win.call_ids[0])
    assert first is not None and first.outcome == "ok"
    assert "base64" not in str(first.messages) and "sha256:" in str(first.messages)


def test_a_pair_without_both_verdicts_is_unresolved_and_reuses_what_was_paid(store, tmp_path):
    x, y = painting(0.3), painting(0.1)
    with CoverageJudge(script=[{"content": "I like them both."}]) as server:
        _, (pair,) = run(_pairs(store, server.base_url, tmp_path, [(x, y)]))
        assert pair.score is None and not pair.resolved
        asked = len(server.requests)
        _, (again,) = run(_pairs(store, server.base_url, tmp_path, [(x, y)]))
        assert len(server.requests) == asked  # both replies were paid for: reused, not re-asked
    assert again.score is None


def test_a_cut_off_reply_keeps_its_leading_verdict():
    assert parse_verdict('{"winner": "B", "reason": "softer bleeds and lay') == (
        "B",
        '{"winner": "B", "reason": "softer bleeds and lay',
    )
    assert parse_verdict('```json\n{"winner": "A", "reason": "layered"}\n```') == ("A", "layered")
    assert parse_verdict('{"winner": "C", "reason": "?"}')[0] is None
    assert parse_verdict("")[0] is None


def test_the_default_judge_is_data_and_a_missing_key_names_the_offline_judge(store):
    assert judge_names() == ["qwen3-vl-30b-a3b"]
    with pytest.raises(JudgeError, match=r"\$HF_TOKEN.*heuristic judge"):
        make_judge(store)
    judge = make_judge(store, "heuristic")
    assert isinstance(judge, HeuristicJudge) and judge.heuristic and judge.name == "heuristic"


def test_the_default_judge_is_qwen3_vl_on_the_router(store, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_never_logged")
    judge = make_judge(store)
    assert judge.name == DEFAULT_JUDGE_MODEL and not judge.heuristic
    assert judge.cfg.base_url == "https://router.huggingface.co/v1"
    bigger = make_judge(store, "Qwen/Qwen3-VL-235B-A22B-Instruct")
    assert bigger.name == "Qwen/Qwen3-VL-235B-A22B-Instruct"


def test_the_heuristic_judge_ties_equal_paintings_and_prefers_a_painted_flower(store):
    from factories import png_bytes

    judge = HeuristicJudge()
    flower, speck = png_bytes(0.95, size=160, blobs=8), painting(0.01)
    pair = run(judge_pair(store, judge, flower, speck))
    assert pair.score == 1.0 and pair.judge.startswith("heuristic#")
    same = run(judge_pair(store, judge, flower, png_bytes(0.95, size=160, blobs=8)))
    assert same.score == 0.5 and same.position_bias


def _rated(store, cov: float, colour, tier: str, curator: str = "alice") -> int:
    photo = add_photo(store, f"p{cov}{colour}.jpg", url=f"https://example.org/{cov}{colour}")
    cid = candidates.save(
        store,
        {
            "job_key": f"agree/{cov}/{colour}",
            "photo_id": photo,
            "generator": "procedural",
            "round": 0,
            "seed": 0,
            "accepted": 1,
            "coverage": cov,
            "png_sha": store.put_png(painting(cov, colour=colour)),
        },
    )
    record_rating(store, cid, curator, tier)
    return cid


def test_agreement_counts_love_over_okay_in_both_orders_with_ties(store, tmp_path):
    red, green = (170, 50, 90), (20, 120, 60)
    _rated(store, 0.4, red, "love")
    _rated(store, 0.3, red, "love")
    _rated(store, 0.1, green, "okay")
    _rated(store, 0.3, green, "okay")
    _rated(store, 0.2, green, "skip")  # not a vote: never paired

    async def go(cached_only=False):
        endpoints = Endpoints()
        try:
            judge = make_judge(store, None, judge_models_file(tmp_path / "m.json", base), endpoints)
            return await judge_agreement(store, judge, cached_only=cached_only)
        finally:
            await endpoints.close()

    with CoverageJudge() as server:
        base = server.base_url
        result = run(go())
        # pairs: 0.4>0.1, 0.4>0.3, 0.3>0.1 the love wins; 0.3 vs 0.3 is a tie
        assert (result.pairs, result.resolved, result.curators) == (4, 4, 1)
        assert (result.love_wins, result.okay_wins, result.ties) == (3, 0, 1)
        assert result.agreement == 0.875 and result.consistency == 0.75
        assert result.warning is None
        asked = len(server.requests)
        assert asked == 8
        cached = run(go(cached_only=True))
        assert len(server.requests) == asked and cached == result


def test_a_judge_that_prefers_okay_is_a_warning(store, tmp_path):
    red, green = (170, 50, 90), (20, 120, 60)
    _rated(store, 0.1, red, "love")
    _rated(store, 0.4, green, "okay")
    judge = HeuristicJudge()
    result = run(judge_agreement(store, judge))
    assert result.heuristic and result.resolved == 1
    with CoverageJudge() as server:

        async def go():
            endpoints = Endpoints()
            try:
                path = judge_models_file(tmp_path / "m.json", server.base_url)
                return await judge_agreement(store, make_judge(store, None, path, endpoints))
            finally:
                await endpoints.close()

        vlm = run(go())
    assert vlm.agreement == 0.0 and vlm.okay_wins == 1
    assert vlm.warning is not None and "cannot tell" in vlm.warning


def test_the_agreement_command_labels_the_heuristic_judge(store, capsys):
    from refpool import cli

    _rated(store, 0.3, (170, 50, 90), "love")
    _rated(store, 0.3, (20, 120, 60), "okay")
    code = cli.main(["pool", "judge-agreement", "--judge", "heuristic", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["heuristic"] and out["pairs"] == 1 and out["resolved"] == 1
    code = cli.main(["pool", "judge-agreement", "--judge", "heuristic"])
    text = capsys.readouterr().out
    assert "heuristic (offline measurements, not a model)" in text
