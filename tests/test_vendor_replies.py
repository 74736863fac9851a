"""Each reply style of a real vendor, through the real openai client and HTTP (tests/fake_vendor.py).

No rendering here: these check what one call records and what the reply amounts to.
"""

from __future__ import annotations

import asyncio
import json
import random

import fake_vendor as fv
import pytest

from generators import coders, llm
from generators.critics import parse_critique
from generators.llm import load_models
from renderer import extract_program

pytestmark = pytest.mark.usefixtures("fast_retries")  # the shared fixture in conftest


@pytest.fixture
def vendor():
    with fv.FakeVendor() as server:
        yield server


def ask(store, vendor, tmp_path, style, purpose="coder", **overrides):
    path = tmp_path / f"{style}.json"
    cfg = load_models(fv.models_file(path, vendor.base_url, [style], **overrides))[style]

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


def calls(store):
    return store.query("SELECT * FROM model_calls ORDER BY id")


@pytest.mark.parametrize(
    ("style", "said"),
    [
        ("truncated-json", "malformed body (Unterminated string"),
        ("error-200", "carrying an error: upstream model overloaded"),
        ("empty-choices", "with no choices"),
    ],
)
def test_a_bad_200_is_one_recorded_failed_call_then_retried(store, vendor, tmp_path, style, said):
    result = ask(store, vendor, tmp_path, style)
    assert result.outcome == "ok" and llm.classify(result, extract_program)[0] == "ok"
    first, second = calls(store)
    assert first["outcome"] == "http_error" and said in first["error"]
    assert first["model"] == f"fake/{style}" and first["http_status"] == 200
    assert second["outcome"] == "ok" and second["job_key"] == style
    assert len(vendor.calls(style)) == 2


@pytest.mark.parametrize(
    "style",
    [
        "kimi-think",
        "two-blocks",
        "first-html",
        "first-json",
        "first-text",
        "first-jsx",
        "first-ts",
        "prose-bare",
        "crlf",
    ],
)
def test_the_final_sketch_is_extracted(store, vendor, tmp_path, style):
    result = ask(store, vendor, tmp_path, style)
    assert llm.classify(result, extract_program) == ("ok", fv.SKETCH + "\n")


@pytest.mark.parametrize("style", ["refusal-field", "curly-refusal"])
def test_refusals_are_recognised(store, vendor, tmp_path, style):
    result = ask(store, vendor, tmp_path, style)
    assert llm.classify(result, extract_program) == ("refusal", None)
    assert style != "refusal-field" or calls(store)[0]["refusal"].startswith("I can't")


def test_code_only_in_the_reasoning_is_used_and_flagged(store, vendor, tmp_path):
    result = ask(store, vendor, tmp_path, "reasoning-only")
    assert result.finish_reason == "stop" and not result.content
    assert llm.classify(result, extract_program) == ("reasoning_code", fv.SKETCH + "\n")
    # without code in it, an empty answer that finished normally is not blamed on the budget
    empty = llm.ChatResult("ok", reasoning="I will paint petals.", finish_reason="stop")
    outcome, _ = llm.classify(empty, extract_program)
    assert outcome == "empty_reasoning"
    assert "token budget" not in coders.feedback(outcome, "stop").message
    assert "token budget" in coders.feedback(outcome, "length").message


def test_timeout_is_a_total_deadline_however_the_bytes_drip(store, vendor, tmp_path):
    result = ask(store, vendor, tmp_path, "slow-drip")  # timeout_s 1.5; a byte every 0.2 s
    assert result.outcome == "ok"
    first, second = calls(store)
    assert first["outcome"] == "timeout" and second["outcome"] == "ok"


def test_retry_after_seconds_is_never_retried_early(store, vendor, tmp_path, monkeypatch):
    monkeypatch.setattr(random, "uniform", lambda a, b: a)  # the jitter at its lowest
    assert ask(store, vendor, tmp_path, "retry-after-seconds").outcome == "ok"
    (_, t0, *_), (_, t1, *_) = vendor.calls("retry-after-seconds")
    assert t1 - t0 >= 1.0


def test_retry_after_http_date_is_honoured(store, vendor, tmp_path):
    assert ask(store, vendor, tmp_path, "retry-after-date").outcome == "ok"
    (_, t0, *_), (_, t1, *_) = vendor.calls("retry-after-date")
    assert t1 - t0 >= 1.0  # the date is 1-2 s ahead (whole seconds); not the 0.01 s backoff


def test_retry_after_parses_both_forms():
    assert llm.retry_after_s("3") == 3.0
    assert llm.retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert llm.retry_after_s("soon") is None and llm.retry_after_s(None) is None


def test_a_key_echoed_in_an_error_is_not_stored_and_401_is_not_retried(
    store, vendor, tmp_path, monkeypatch
):
    monkeypatch.setenv("FAKE_KEY", "hf_SecretKeyT123")
    result = ask(store, vendor, tmp_path, "key-echo-401", key_env="FAKE_KEY")
    assert result.outcome == "http_error" and result.permanent and result.http_status == 401
    (call,) = calls(store)
    assert "401" in call["error"] and "Invalid credentials" in call["error"]
    stored = json.dumps([dict(c) for c in calls(store)])
    assert "hf_S****T123" not in stored and "T123" not in stored and "Secret" not in stored


def test_a_critic_that_cannot_take_images_is_a_permanent_error(store, vendor, tmp_path):
    result = ask(store, vendor, tmp_path, "critic-no-images", purpose="critic")
    assert result.permanent and "image input not supported" in result.error
    assert len(vendor.calls("critic-no-images")) == 1  # a 400 is not retried


@pytest.mark.parametrize("style", ["critic-lenient", "critic-lenient-2"])
def test_lenient_critic_json(store, vendor, tmp_path, style):
    reply = fv._LENIENT if style == "critic-lenient" else fv._BRACES_AFTER
    critique = parse_critique(reply, "vlm")
    assert critique.critic == "vlm" and critique.scores["fidelity"] == 6
    assert critique.scores["watercolour"] in (7, 7.5) and critique.scores["composition"] == 8
    assert critique.scores["coverage"] == 5 and critique.advice


def test_lenient_critic_json_through_http(store, vendor, tmp_path):
    for _ in range(2):  # the style alternates its two sloppy forms
        result = ask(store, vendor, tmp_path, "critic-lenient", purpose="critic")
        assert parse_critique(result.content, "vlm").scores["composition"] == 8


@pytest.mark.parametrize(
    "reply",
    [
        "◁think▷draft ```js\nfunction setup() {\n◁/think▷Here:\n" + fv.FENCED,
        "<|channel|>analysis<|message|>```js\nfunction setup() {<|end|>"
        "<|start|>assistant<|channel|>final<|message|>" + fv.FENCED,
        "thinking without an opening tag ```js\nfunction setup() {</think>\n" + fv.FENCED,
        "[THINK]hmm[/THINK]" + fv.FENCED,
        "Sure! ```js\n" + fv.SKETCH + "\n```",
        "````javascript\n" + fv.SKETCH + "\n````",
        "~~~p5js\n" + fv.SKETCH + "\n~~~",
        fv.SKETCH + "\n\nThis paints five petals.",
    ],
)
def test_other_ways_servers_wrap_the_sketch(reply):
    assert extract_program(reply) == fv.SKETCH + "\n"


def test_a_stream_sent_to_a_plain_request_is_read():
    from generators.replies import parse_body

    chunks = [{"reasoning_content": "hm"}, {"content": "```js\n"}, {"content": fv.SKETCH + "\n```"}]
    lines = [
        "data: " + json.dumps({"choices": [{"delta": c, "finish_reason": None}]}) for c in chunks
    ]
    lines += ['data: {"choices": [{"delta": {}, "finish_reason": "stop"}]}', "data: [DONE]"]
    result = parse_body("\n\n".join(lines).encode(), 200)
    assert result.outcome == "ok" and result.reasoning == "hm" and result.finish_reason == "stop"
    assert llm.classify(result, extract_program) == ("ok", fv.SKETCH + "\n")


@pytest.mark.parametrize(
    "reply",
    [
        "{'scores': {'fidelity': 6, 'watercolour': 7, 'composition': 8, 'coverage': 5}}",
        '{"ratings": [{"criterion": "Fidelity", "score": 6}, {"criterion": "Watercolor quality",'
        ' "score": "7/10"}, {"criterion": "Composition", "score": 8},'
        ' {"criterion": "Coverage", "score": 5}]}',
        '{"fidelity_to_photo": 60, "watercolour_quality": 70, "composition": 80,'
        ' "paint_coverage": 50}',
    ],
)
def test_other_critic_shapes(reply):
    scores = parse_critique(reply, "vlm").scores
    assert scores == {"fidelity": 6, "watercolour": 7, "composition": 8, "coverage": 5}
