"""A judge's verdicts in more forms, and every pair without one with its reason, through the
real commands.

`refpool pool judge-agreement` and `refpool pool calibrate` run in-process against the fake
vendor (tests/fake_vendor_judge.py, tests/fake_vendor_replies.py). The curators loved the
paintings with more paint, and every judge style wraps that truth (or refuses it): a readable
form must agree fully; a judge that resolves nothing must end the command with exit status 1
and its reason; one that resolves some pairs exits 0 and names the rest with their reasons.
"""

from __future__ import annotations

import json

import fake_vendor as fv
import pytest
from factories import add_photo
from judge_fakes import painting

from curation.ratings import record_rating
from pool.reward.judge import parse_verdict
from pool.reward.verdict import read_verdict
from refpool import cli
from refpool.core.reply import read_message
from refpool.core.store import candidates

pytestmark = pytest.mark.usefixtures("fast_retries")  # the shared fixture in conftest

RED, GREEN = (170, 50, 90), (20, 120, 60)
REFUSAL = '"I can\'t compare these images."'


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _candidate(store, cov: float, colour, name: str) -> int:
    photo = add_photo(store, f"{name}.jpg", url=f"https://example.org/{name}")
    return candidates.save(
        store,
        {
            "job_key": f"reasons/{name}",
            "photo_id": photo,
            "generator": "procedural",
            "round": 1,
            "seed": 0,
            "accepted": 1,
            "coverage": cov,
            "png_sha": store.put_png(painting(cov, colour=colour)),
        },
    )


def _rated(store) -> None:
    """Two loves (40% and 35% paint) and two okays (10%, 15%): four love/okay pairs."""
    for i, cov in enumerate((0.40, 0.35)):
        record_rating(store, _candidate(store, cov, RED, f"love{i}"), "alice", "love")
    for i, cov in enumerate((0.10, 0.15)):
        record_rating(store, _candidate(store, cov, GREEN, f"okay{i}"), "alice", "okay")


def _models(tmp_path, base_url: str, style: str, **fields) -> str:
    path = tmp_path / f"{style}.json"
    fv.models_file(path, base_url, [style])
    data = json.loads(path.read_text())
    data["models"][style] |= fields
    path.write_text(json.dumps(data))
    return str(path)


def _agreement(capsys, tmp_path, style: str, *more: str, **fields):
    with fv.FakeVendor() as vendor:
        models = _models(tmp_path, vendor.base_url, style, **fields)
        result = run(capsys, "pool", "judge-agreement", "--judge", style, "--models-file", models,
                     *more)  # fmt: skip
        return (*result, vendor.calls(style))


@pytest.mark.parametrize(
    "style",
    [
        "judge-tool-call",  # message.tool_calls[0].function.arguments = {"winner": ...}
        "judge-answer-tag",  # <answer>B</answer>
        "judge-boxed",  # $\boxed{B}$
        "judge-boxed-text",  # \boxed{\text{B}}
        "judge-scores-out-of",  # A: 6/10, B: 8/10
        "judge-scores-image",  # Image A: 7.5, Image B: 5
        "judge-scores-equals",  # Score A = 5; Score B = 7.5
    ],
)
def test_more_verdict_forms_are_read(store, tmp_path, capsys, style):
    _rated(store)
    code, out, err, _ = _agreement(capsys, tmp_path, style, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert (result["resolved"], result["agreement"], result["unresolved_pairs"]) == (4, 1.0, [])


NO_VERDICT = [
    ("judge-refusal-field", "refused", "judge refused: " + REFUSAL),
    ("judge-content-filter", "refused", "judge refused: the vendor's filter stopped the reply"),
    ("judge-refuses-german", "refused", 'judge refused: "Es tut mir leid, ich kann'),
    ("judge-refuses-chinese", "refused", 'judge refused: "抱歉，我无法比较这两幅画。"'),
    ("judge-reasoning-only", "reasoning_only", "answer left in the reasoning only: the answer"),
    ("judge-think-cut", "reasoning_only", "cut off by the token budget"),
    ("judge-unreadable", "unreadable", 'unreadable answer: "Both paintings have their merits."'),
    ("judge-tie", "named_neither", 'named neither painting: "{"winner": "tie"'),
    ("judge-scores-tied", "named_neither", 'named neither painting: "A: 7/10, B: 7/10"'),
    ("judge-contradictory", "named_both", "named both paintings: "),
    ("judge-moderated", "call_failed", "call failed: HTTP 400: "),
]


@pytest.mark.parametrize(("style", "problem", "said"), NO_VERDICT)
def test_a_judge_that_resolves_nothing_fails_with_its_reason(
    store, tmp_path, capsys, style, problem, said
):
    _rated(store)
    code, out, err, _ = _agreement(capsys, tmp_path, style, "--json")
    assert code == 1, err
    result = json.loads(out)  # what it got is still printed, then the error
    assert result["resolved"] == 0 and len(result["unresolved_pairs"]) == 4
    for pair in result["unresolved_pairs"]:
        assert pair["problems"] == [problem] and any(said in r for r in pair["reasons"]), pair
        assert pair["pair"] == f"love {pair['love_id']} vs okay {pair['okay_id']}"
    assert f"error: judge fake/{style} gave no verdict on any of the 4 pairs" in err
    assert said in err and "What to do:" in err


def test_calibrate_fails_loudly_and_lists_every_pair_with_its_reason(store, tmp_path, capsys):
    ids = [_candidate(store, cov, GREEN, f"c{cov}") for cov in (0.05, 0.45)]
    folder = tmp_path / "policy"
    folder.mkdir()
    for i, cov in enumerate((0.10, 0.20)):
        (folder / f"step{i}.png").write_bytes(painting(cov, colour=RED))
    with fv.FakeVendor() as vendor:
        models = _models(tmp_path, vendor.base_url, "judge-refusal-field")
        code, out, err = run(capsys, "pool", "calibrate", "--paintings", str(folder),
                             "--models-file", models)  # fmt: skip
    assert code == 1, err
    assert "unresolved pairs (no verdict in one order or both): 4" in out
    assert f"judge refused: {REFUSAL}  [4 pairs]" in out
    for cid in ids:
        for step in ("step0.png", "step1.png"):
            assert f"candidate {cid} vs {step}" in out
    assert "error: judge fake/judge-refusal-field gave no verdict on any of the 4 pairs" in err
    assert "choose another judge" in err


def test_a_judge_that_resolves_some_pairs_exits_0_and_names_the_rest(store, tmp_path, capsys):
    _rated(store)  # it refuses every pair holding the 40% love: two of the four
    code, out, err, _ = _agreement(capsys, tmp_path, "judge-refuses-some")
    assert code == 0, err
    assert "prefers love in 1.00 of 2 pairs" in out
    assert f"judge refused: {REFUSAL}  [2 pairs]" in out
    code, out, err, _ = _agreement(capsys, tmp_path, "judge-refuses-some", "--json")
    result = json.loads(out)
    assert code == 0 and result["resolved"] == 2
    assert [p["problems"] for p in result["unresolved_pairs"]] == [["refused"], ["refused"]]


@pytest.mark.parametrize("mode", ["json_object", "json_schema", None])
def test_the_prompt_says_json_whenever_the_request_asks_for_json(store, tmp_path, capsys, mode):
    _rated(store)
    fields = {"structured_output": mode} if mode else {}
    code, out, err, calls = _agreement(capsys, tmp_path, "judge-openai-json-word", **fields)
    assert code == 0 and "prefers love in 1.00 of 4 pairs" in out, err
    for _, _, body, _ in calls:
        prompt = body["messages"][0]["content"][0]["text"]
        assert "JSON" in prompt and '"winner"' in prompt and '"reason"' in prompt
        assert body["response_format"]["type"] == (mode or "json_schema")


def test_a_judge_without_structured_output_is_asked_in_words(store, tmp_path, capsys):
    _rated(store)
    code, _, err, calls = _agreement(capsys, tmp_path, "judge-no-response-format",
                                     structured_output="none")  # fmt: skip
    assert code == 0, err
    prompt = calls[0][2]["messages"][0]["content"][0]["text"]
    assert "JSON" not in prompt and 'Give the winner first ("A" or "B")' in prompt
    assert "response_format" not in calls[0][2]


@pytest.mark.parametrize(
    ("mode", "advice"),
    [("json_object", '"structured_output" to "none"'),
     ("json_schema", '"structured_output" to "json_object" or "none"')],
)  # fmt: skip
def test_the_advice_never_names_the_mode_just_refused(store, tmp_path, capsys, mode, advice):
    _rated(store)
    code, out, err, _ = _agreement(capsys, tmp_path, "judge-no-response-format",
                                   structured_output=mode)  # fmt: skip
    assert code == 1 and advice in err + out
    assert f'"structured_output" to "{mode}"' not in err + out
    assert f'to "{mode}" or' not in err + out


@pytest.mark.parametrize(
    ("text", "winner"),
    [
        ("<answer>B</answer>", "B"),
        ("<answer>Image A</answer>", "A"),
        ("So the answer is $\\boxed{B}$.", "B"),
        ("\\boxed{\\text{A}}", "A"),
        ("\\boxed{\\text{Image B}}", "B"),
        ("A: 6/10, B: 8/10", "B"),
        ("Image A: 7, Image B: 5", "A"),
        ("Score A = 6.5; Score B = 8", "B"),
        ("A: 7/10, B: 7/10", None),  # equal scores: a tie, no verdict
        ("A: 8/10 and nothing for the other", None),  # one score is no comparison
        ("\\boxed{C}", None),
    ],
)
def test_verdict_forms(text, winner):
    assert parse_verdict(text)[0] == winner


def test_a_verdict_in_any_familys_tool_call_is_read():
    args = json.dumps({"winner": "B", "reason": "softer bleeds"})
    for text in (
        f'<tool_call>{{"name": "verdict", "arguments": {args}}}</tool_call>',
        f"<｜tool▁call▁begin｜>verdict<｜tool▁sep｜>{args}<｜tool▁call▁end｜>",
        f"<|tool_call_begin|>functions.verdict:0<|tool_call_argument_begin|>{args}"
        "<|tool_call_end|>",
        f"<function=verdict>{args}</function>",
    ):
        reading = read_verdict(read_message({"content": text}))
        assert (reading.winner, reading.reason) == ("B", "softer bleeds")
