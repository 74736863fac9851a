"""Vendor failures read by what they mean, one call at a time (tests/fake_vendor_failures.py).

Each style goes through the real openai client and HTTP; these check what is recorded, what is
retried and when, and which failures stop a model. The CLI-level checks (what a user sees)
are in tests/test_vendor_failures_cli.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

import fake_vendor as fv
import pytest

from generators import llm, vendor
from generators.llm import load_models
from refpool.core.finish import finish_meaning
from refpool.core.store.model_calls import scrub_secrets

pytestmark = pytest.mark.usefixtures("fast_retries")  # the shared fixture in conftest


@pytest.fixture
def server():
    with fv.FakeVendor() as fake:
        yield fake


def ask(store, server, tmp_path, style, *, keys=("k",), endpoints=None, **overrides):
    """One chat per job key in `keys`, in order, on one Endpoints; returns the results."""
    path = tmp_path / f"{style}.json"
    cfg = load_models(fv.models_file(path, server.base_url, [style], **overrides))[style]
    purpose = "critic" if style.startswith("critic") else "coder"

    async def go():
        ends = endpoints or llm.Endpoints()
        try:
            out = []
            for key in keys:
                msgs = [{"role": "user", "content": "paint a flower"}]
                if purpose == "critic":  # a critic sees the photo and the painting
                    parts = [
                        {"type": "text", "text": "critique"},
                        llm.image_part(b"png", "image/png"),
                    ]
                    msgs = [{"role": "user", "content": parts}]
                out.append(
                    await llm.chat(
                        store, ends, cfg, msgs, purpose=purpose, temperature=0.6, job_key=key
                    )
                )
            return out, ends
        finally:
            await ends.close()

    return asyncio.run(go())


def calls(store):
    return store.query("SELECT * FROM model_calls ORDER BY id")


@pytest.mark.parametrize("style", ["or-error-200", "glm-network-error"])
def test_an_error_met_mid_reply_is_a_failed_call_retried_and_never_reused(
    store, server, tmp_path, style
):
    (result,), _ = ask(store, server, tmp_path, style)
    assert result.outcome == "ok" and len(server.calls(style)) == 2
    first, second = calls(store)
    assert first["outcome"] == "http_error" and first["http_status"] == 200
    assert "finish_reason" in first["error"] and first["response"]  # what came is kept, unpaid
    assert second["outcome"] == "ok"
    assert llm.paid_reply(store, "k")[0] == second["id"]  # the broken reply is never reused
    if style == "or-error-200":
        assert "Provider returned error" in first["error"]


def test_a_reply_the_vendor_keeps_breaking_off_is_asked_again_on_a_rerun(store, server, tmp_path):
    style = "glm-network-error-always"
    (result,), _ = ask(store, server, tmp_path, style)
    assert result.outcome == "http_error" and not result.permanent
    assert len(server.calls(style)) == 4  # retried: the vendor failed, not the request
    ask(store, server, tmp_path, style)
    assert len(server.calls(style)) == 8  # a rerun asks again: nothing was paid for


def test_a_reply_stopped_by_the_vendors_filter_is_a_refusal(store, server, tmp_path):
    (result,), _ = ask(store, server, tmp_path, "glm-sensitive")
    outcome, program = llm.classify(result, llm_extract())
    assert (outcome, program) == ("refusal", None)
    stored = llm.recorded_reply(store, result.call_id)
    assert llm.classify(stored, llm_extract())[0] == "refusal"  # read back alike
    assert calls(store)[0]["response"]  # the half answer stays recorded


def llm_extract():
    from renderer import extract_program

    return extract_program


def test_finish_reasons_are_read_by_meaning():
    assert finish_meaning("sensitive") == finish_meaning("content_filter") == "refusal"
    assert finish_meaning("network_error") == finish_meaning("error") == "vendor_error"
    assert finish_meaning("MAX_TOKENS") == "length" and finish_meaning(None) == "stop"
    assert finish_meaning("tool_calls") == "tool_calls" and finish_meaning("weird") == "other"


def test_a_lone_surrogate_is_recorded_repaired_and_the_call_is_paid_once(store, server, tmp_path):
    (result,), _ = ask(store, server, tmp_path, "surrogate")
    assert result.outcome == "ok" and result.call_id is not None
    (row,) = calls(store)
    assert "\ufffd" in row["response"] and "\ufffd" in result.content
    assert llm.paid_reply(store, "k") is not None  # a rerun reuses it


def test_a_moderation_refusal_concerns_one_request(store, server, tmp_path):
    results, ends = ask(store, server, tmp_path, "or-flagged", keys=("a", "b"))
    assert results[0].permanent and "flagged" in results[0].error
    assert results[1].outcome == "ok" and not ends.disabled  # the model went on
    assert len(server.calls("or-flagged")) == 2  # the refusal was not retried
    ask(store, server, tmp_path, "or-flagged", keys=("a",))
    assert len(server.calls("or-flagged")) == 2  # nor asked again on a rerun
    ask(store, server, tmp_path, "or-flagged", keys=("a",), endpoints=llm.Endpoints(None, True))
    assert len(server.calls("or-flagged")) == 3  # unless told to (--retry-failed)


def test_an_inspection_refusal_does_not_stop_the_critic(store, server, tmp_path):
    results, ends = ask(store, server, tmp_path, "critic-inspection", keys=("a", "b"))
    assert results[0].permanent and "data_inspection_failed" in results[0].error
    assert results[1].outcome == "ok" and not ends.disabled


@pytest.mark.parametrize("style", ["credit-402", "quota-429"])
def test_no_credit_or_quota_stops_the_model_at_once(store, server, tmp_path, style):
    results, ends = ask(store, server, tmp_path, style, keys=("a", "b", "c"))
    assert len(server.calls(style)) == 1  # not retried as if transient, nor asked again
    assert all(r.permanent for r in results)
    assert "was disabled" in ends.disabled[style] and "credit" in ends.disabled[style]


def test_the_rate_limit_reset_header_is_honoured(store, server, tmp_path):
    (result,), _ = ask(store, server, tmp_path, "rate-reset")
    first, second = (t for _, t, _, _ in server.calls("rate-reset"))
    assert result.outcome == "ok" and second - first >= 1.2  # not the 9-minute token reset


def test_a_loading_model_is_waited_for_as_long_as_it_says(store, server, tmp_path):
    (result,), _ = ask(store, server, tmp_path, "hf-loading")
    times = [t for _, t, _, _ in server.calls("hf-loading")]
    assert result.outcome == "ok" and len(times) == 3
    assert times[1] - times[0] >= 1.0 and times[2] - times[1] >= 1.0
    assert "fake/hf-loading" in calls(store)[0]["error"]  # a model's name is no key


def test_a_wait_past_the_retry_budget_is_given_up_and_said(store, server, tmp_path):
    (result,), _ = ask(store, server, tmp_path, "hf-loading", retry_budget_s=0.5)
    assert result.outcome == "http_error" and len(server.calls("hf-loading")) == 1
    assert "retry budget of 0.5 s" in result.error and "retry_budget_s" in result.error


def test_a_text_only_servers_500_for_image_parts_stops_the_model_at_once(store, server, tmp_path):
    """Evidence about the request (it carried images), not repetition: one call, not four."""
    style = "critic-llama-images"
    results, ends = ask(store, server, tmp_path, style, keys=("a", "b", "c"))
    assert len(server.calls(style)) == 1  # not retried, and the model stopped after it
    assert results[0].permanent and "can only concatenate" in results[0].error
    assert '"accepts_images"' in ends.disabled[style]  # the field to change is named
    assert calls(store)[0]["failure"] == "config/images/images-phrase"
    cfg = load_models(str(tmp_path / f"{style}.json"))[style]
    assert "can only concatenate" in llm.permanent_refusal(store, cfg, "critic")
    changed = dataclasses.replace(cfg, max_tokens=cfg.max_tokens + 1)
    assert llm.permanent_refusal(store, changed, "critic") is None  # a changed entry is asked


def test_a_server_failure_that_repeats_identically_is_still_the_vendors(store, server, tmp_path):
    """An outage repeats identically by nature: retried, and asked again on a rerun."""
    style = "judge-down"
    results, ends = ask(store, server, tmp_path, style, keys=("a", "b"))
    assert len(server.calls(style)) == 8 and not ends.disabled  # four attempts per request
    assert not any(r.permanent for r in results)
    assert {row["failure"] for row in calls(store)} == {"vendor/server/status-5xx"}
    ask(store, server, tmp_path, style, keys=("a",))
    assert len(server.calls(style)) == 12  # a rerun asks again


def test_durations_and_waits_in_every_form():
    assert vendor.duration_s("1m30s") == 90 and vendor.duration_s("6s") == 6
    assert vendor.duration_s("250ms") == 0.25 and vendor.duration_s("1h2m") == 3720
    assert vendor.duration_s("soon") is None
    now = 1_000_000_000.0
    assert vendor.server_wait_s({"Retry-After": "3"}, None, now) == 3
    assert vendor.server_wait_s({"retry-after-ms": "1500"}, None, now) == 1.5
    said = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"}
    assert vendor.server_wait_s(said, None, now) == 90
    assert vendor.server_wait_s({"x-ratelimit-reset": str(int(now * 1000) + 6000)}, "", now) == 6
    body = json.dumps({"error": "Model x is currently loading", "estimated_time": 30.0})
    assert vendor.server_wait_s({}, body, now) == 30
    assert vendor.server_wait_s({}, "{}", now) is None


@pytest.mark.parametrize(
    ("status", "said", "means"),
    [
        (400, '{"error": {"code": "data_inspection_failed"}}', "request"),
        (403, '{"error": {"message": "Input was flagged by moderation"}}', "request"),
        (402, '{"error": {"message": "Payment Required"}}', "account"),
        (429, '{"error": {"type": "insufficient_quota"}}', "account"),
        (429, '{"error": {"message": "slow down"}}', "vendor"),
        (401, "{}", "account"),
        (404, '{"error": {"message": "The model `x` does not exist."}}', "config"),
        (503, '{"error": "Model x is currently loading", "estimated_time": 20}', "vendor"),
        (400, '{"error": {"code": "context_length_exceeded"}}', "request"),
        (422, '{"detail": [{"msg": "Extra inputs are not permitted"}]}', "config"),
        (422, '{"detail": [{"loc": ["body", "response_format", "type"]}]}', "config"),
        (413, "Request Entity Too Large", "request"),
        (500, "boom", "vendor"),
        (None, "no reply within 30 s", "vendor"),
    ],
)
def test_one_table_scopes_every_failure(status, said, means):
    assert vendor.classify_failure(status, said).means == means


def test_keys_are_redacted_by_shape_not_by_word():
    assert scrub_secrets("The model `org/hf-loading` does not exist") == (
        "The model `org/hf-loading` does not exist"
    )
    assert "T123" not in scrub_secrets("Invalid credentials: hf_S****T123")
    assert "[redacted]" in scrub_secrets("key hf_" + "aB3" * 12)
    assert "[redacted]" in scrub_secrets("sk-proj-" + "x9" * 12)
    assert scrub_secrets("use sk-learn or pk-free") == "use sk-learn or pk-free"


def test_a_max_tokens_that_is_the_whole_context_stops_the_model_naming_the_field(
    store, server, tmp_path
):
    """vLLM states its context only in words. An entry whose max_tokens alone is that context
    can send no request that fits: the entry is the cause, paid once, not once per request."""
    style = "vllm-context"
    results, ends = ask(store, server, tmp_path, style, keys=("a", "b", "c"), max_tokens=8000)
    assert len(server.calls(style)) == 1 and all(r.permanent for r in results)
    said = ends.disabled[style]
    assert 'change "max_tokens"' in said and "maximum context length is 4096" in said
    assert calls(store)[0]["failure"] == "config/context_length/max-tokens-over-context"
    cfg = load_models(str(tmp_path / f"{style}.json"))[style]
    assert "4096" in llm.permanent_refusal(store, cfg, "coder")  # a rerun does not ask again
    (fixed,), _ = ask(store, server, tmp_path, style, keys=("d",), max_tokens=2000)
    assert fixed.outcome == "ok"  # the changed entry is asked, and fits


LLAMA_CPP_CONTEXT = json.dumps(
    {"error": {"message": "the request exceeds the available context size, try increasing it",
               "type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 8192}}
)  # fmt: skip

TGI_CONTEXT = json.dumps(
    {"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096."
              " Given: 4000 `inputs` tokens and 200 `max_new_tokens`", "error_type": "validation"}
)  # fmt: skip


@pytest.mark.parametrize(
    ("body", "max_tokens", "means"),
    [  # vLLM's words; llama.cpp's n_ctx field; an OpenAI-style code with the size in words
        ('{"message": "This model\'s maximum context length is 4096 tokens."}', 4096, "config"),
        ('{"message": "This model\'s maximum context length is 4096 tokens."}', 2000, "request"),
        (LLAMA_CPP_CONTEXT, 8192, "config"),
        (LLAMA_CPP_CONTEXT, 8191, "request"),
        (
            '{"error": {"code": "context_length_exceeded", "message": "context window of'
            ' 32768 tokens"}}',
            40000,
            "config",
        ),  # fmt: skip
        ('{"error": {"code": "context_length_exceeded"}}', 10**6, "request"),  # no size stated
        ("context length is 4096; your prompt is too long", 4096, "config"),  # plain text
        (TGI_CONTEXT, 4096, "config"),  # TGI: the limit in its own sentence, as a 422
        (TGI_CONTEXT, 200, "request"),
    ],
)
def test_a_context_refusal_is_the_entrys_only_when_max_tokens_alone_fills_it(
    body, max_tokens, means
):
    status = 422 if body == TGI_CONTEXT else 400
    failure = vendor.read_failure(status, body, max_tokens=max_tokens)
    assert failure.kind == "context_length" and failure.means == means
    assert vendor.read_failure(status, body).means == "request"  # max_tokens unknown: the request's
