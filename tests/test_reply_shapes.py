"""The one reply reader (refpool.core.reply) against the shapes real servers send.

Each reply comes over HTTP from the fake vendor (tests/fake_vendor_replies.py) through the
real openai client and generators.llm, and is recorded; what a coder, a critic or the
extraction makes of it is then checked, fresh and as read back from the store.
"""

from __future__ import annotations

import asyncio
import json
import time

import fake_vendor as fv
import fake_vendor_replies as shapes
import pytest

from generators import coders, llm
from generators.critics import parse_critique
from generators.llm import load_models
from pool.reward.judge import parse_verdict
from refpool.core.reply import read_message
from renderer import extract_program, static_check

pytestmark = pytest.mark.usefixtures("fast_retries")  # the shared fixture in conftest


@pytest.fixture
def vendor():
    with fv.FakeVendor() as server:
        yield server


def ask(store, vendor, tmp_path, style, purpose="coder"):
    path = tmp_path / f"{style}.json"
    cfg = load_models(fv.models_file(path, vendor.base_url, [style]))[style]

    async def go():
        endpoints = llm.Endpoints()
        try:
            msgs = [{"role": "user", "content": "paint a flower"}]
            return await llm.chat(
                store, endpoints, cfg, msgs, purpose=purpose, temperature=0.6, job_key=style
            )
        finally:
            await endpoints.close()

    return asyncio.run(go())


WHOLE = fv.SKETCH + "\n"


@pytest.mark.parametrize(
    ("style", "program"),
    [
        ("tool-write-file", WHOLE),
        ("tool-args-object", WHOLE),
        ("tool-legacy-function-call", WHOLE),
        ("tool-hermes-text", WHOLE),
        ("tool-qwen3-xml", WHOLE),
        ("tool-glm-xml", WHOLE),  # glued inside <arg_value>: first and last lines kept
        ("tool-mistral", WHOLE),
        ("html-escaped", shapes.AMP_SKETCH + "\n"),  # unescaped, because that parses
        ("option-b", WHOLE),  # the whole sketch, not the later draw()-only fragment
        ("content-parts", WHOLE),
        ("thinking-parts", WHOLE),  # the draft in a thinking part is not the answer
        ("reasoning-field", WHOLE),  # nor the one in OpenRouter's `reasoning`
        ("think-no-opener", WHOLE),  # nor the one before a lone </think>
    ],
)
def test_the_program_is_found_in_every_answer_shape(store, vendor, tmp_path, style, program):
    result = ask(store, vendor, tmp_path, style)
    assert llm.classify(result, extract_program) == ("ok", program)
    stored = llm.recorded_reply(store, result.call_id)  # a rerun reads the stored reply alike
    assert stored is not None and llm.classify(stored, extract_program) == ("ok", program)
    assert static_check(program) == []


def test_a_cut_off_thought_is_never_the_program(store, vendor, tmp_path):
    result = ask(store, vendor, tmp_path, "think-cut")  # <think> never closed, finish length
    assert llm.classify(result, extract_program) == ("empty_reasoning", None)


def test_a_runaway_is_too_long_and_its_revise_prompt_is_capped(store, vendor, tmp_path):
    result = ask(store, vendor, tmp_path, "runaway-length")
    outcome, program = llm.classify(result, extract_program)
    assert outcome == "truncated" and program is not None and len(program) > 3_000_000
    (violation,) = static_check(program)
    assert violation.code == "too_long" and "3080428 characters" in violation.message
    shown = coders.program_for_revision(program)
    assert len(shown) < coders.REVISE_PROGRAM_CHARS + 200
    assert shown.startswith(fv.SKETCH) and "only the first" in shown
    assert f"was {len(program.strip())} characters" in shown
    assert coders.program_for_revision(fv.SKETCH) == fv.SKETCH  # an honest sketch is whole


def test_many_drafts_are_extracted_off_the_loop_within_a_deadline(store, vendor, tmp_path):
    result = ask(store, vendor, tmp_path, "many-drafts")  # 300 whole drafts, none parses
    lags: list[float] = []

    async def ticker(stop: asyncio.Event) -> None:
        while not stop.is_set():
            started = time.monotonic()
            await asyncio.sleep(0.01)
            lags.append(time.monotonic() - started - 0.01)

    async def go() -> tuple[tuple[str, str | None], float]:
        stop = asyncio.Event()
        tick = asyncio.create_task(ticker(stop))
        started = time.monotonic()
        got = await coders.classify_off_loop(result)  # what ModelCoder.write awaits
        took = time.monotonic() - started
        stop.set()
        await tick
        return got, took

    (outcome, program), took = asyncio.run(go())
    assert outcome == "ok" and program == shapes.BROKEN_DRAFT + "\n// 299\n"  # the last draft
    assert took < 3.0 + 2.0  # the static work across drafts has one deadline
    assert max(lags) < max(0.25, took / 4), (max(lags), took)  # the loop kept running
    started = time.monotonic()  # a tight deadline is kept, and the ranking still decides
    assert extract_program(result.reply, deadline_s=0.1) == program
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize(
    ("style", "scores", "said"),
    [
        ("critic-nested", {"fidelity": 6, "watercolour": 7, "composition": 8, "coverage": 5}, ""),
        (
            "critic-percent",
            {"fidelity": 7.2, "watercolour": 8.5, "composition": 9.0, "coverage": 0.8},
            "scored on 0-100",
        ),
        (
            "critic-five-scale",
            {"fidelity": 2.5, "watercolour": 10.0, "composition": 5.0, "coverage": 7.5},
            "scored on 1-5",
        ),
        (
            "critic-unit-scale",
            {"fidelity": 6, "watercolour": 7, "composition": 8, "coverage": 5},
            "scored on 0-1",
        ),
        ("critic-think", {"fidelity": 6, "watercolour": 7, "composition": 8, "coverage": 5}, ""),
    ],
)
def test_critic_scores_are_found_and_their_scale_read(store, vendor, tmp_path, style, scores, said):
    result = ask(store, vendor, tmp_path, style, purpose="critic")
    critique = parse_critique(result.reply.answer, "vlm")
    assert critique.scores == scores
    assert said in critique.summary


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('{"fidelity": 3, "watercolour": 4, "composition": 2, "coverage": 5}', "ambiguous"),
        ('{"fidelity": 11, "watercolour": 3, "composition": 2, "coverage": 1}', "ambiguous"),
        (
            '{"scale": "0-10", "scores": {"fidelity": 12, "watercolour": 3, "composition": 2,'
            ' "coverage": 1}}',
            "outside its scale",
        ),  # fmt: skip
    ],
)
def test_a_score_is_never_clamped_silently(reply, why):
    with pytest.raises(ValueError, match=why):
        parse_critique(reply, "vlm")


def test_an_ambiguous_critic_reply_comes_over_http_and_is_refused(store, vendor, tmp_path):
    result = ask(store, vendor, tmp_path, "critic-ambiguous-scale", purpose="critic")
    with pytest.raises(ValueError, match="scale is ambiguous"):
        parse_critique(result.reply.answer, "vlm")


@pytest.mark.parametrize(
    ("text", "winner"),
    [
        ('<think>At first glance {"winner": "A"} ... but B is better</think>{"winner": "B"}', "B"),
        ('draft {"winner": "A"}</think>{"winner": "B"}', "B"),
        ('<think>{"winner": "A"} and so', None),  # the thought was cut: no answer at all
        ("A", "A"),
        ("**B**", "B"),
        ("Image B is better: its washes layer.", "B"),
        ("I prefer Painting A.", "A"),
        ('{"winner": "b"}', "B"),
        ('{"winner": "Image A", "reason": "B is better lit, A is better painted"}', "A"),
        ('{"verdict": {"winner": "second"}}', "B"),
        ("Both are fine. [[A]]", "A"),
        ("Winner: B", "B"),
        ('{"winner": "A", "reason": "softer bleeds and lay', "A"),  # cut off
        ("Both paintings have merits.", None),
        ("Neither A nor B is better.", None),
        ('{"winner": "tie"}', None),
        ("[[A]] ... on reflection [[B]]", None),  # contradictory
        ('{"winner": "A"} {"winner": "B"}', None),
        ("The answer is a hard one.", None),  # a lowercase article is not a verdict
    ],
)
def test_readable_verdicts_are_read_and_the_rest_stay_unresolved(text, winner):
    assert parse_verdict(read_message({"content": text}).answer)[0] == winner


def test_a_streamed_tool_call_is_folded_and_read():
    from generators.replies import parse_body

    arguments = json.dumps({"path": "sketch.js", "content": fv.SKETCH})
    pieces = [arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]]
    deltas = [{"tool_calls": [{"index": 0, "function": {"name": "write_file"}}]}] + [
        {"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in pieces
    ]
    lines = [
        "data: " + json.dumps({"choices": [{"delta": d, "finish_reason": None}]}) for d in deltas
    ]
    lines += ['data: {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}', "data: [DONE]"]
    result = parse_body("\n\n".join(lines).encode(), 200)
    assert llm.classify(result, extract_program) == ("ok", WHOLE)
