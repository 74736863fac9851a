"""Failures charged to their cause, one call at a time (issue 31): a reply the vendor broke off
is never the model's work, an outage that repeats is still an outage, every stated wait is
honoured (0 is no advice), a reset past the budget stops the model once, and a refused request
field is adapted when the entry allows it.
"""

from __future__ import annotations

import asyncio
import json

import fake_vendor as fv
import pytest

from generators import llm
from generators.llm import load_models

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture
def server():
    with fv.FakeVendor() as fake:
        yield fake


def ask(store, server, tmp_path, style, keys=("k",), endpoints=None, **overrides):
    cfg = load_models(fv.models_file(tmp_path / f"{style}.json", server.base_url, [style],
                                     **overrides))[style]  # fmt: skip

    async def go():
        ends = endpoints or llm.Endpoints()
        try:
            msgs = [{"role": "user", "content": "paint a flower"}]
            out = [
                await llm.chat(store, ends, cfg, msgs, purpose="coder", temperature=0.6, job_key=k)
                for k in keys
            ]
            return out, ends
        finally:
            await ends.close()

    return asyncio.run(go())


def rows(store):
    return store.query("SELECT * FROM model_calls ORDER BY id")


@pytest.mark.parametrize("style", ["deepseek-resource", "context-window-finish", "stream-cut"])
def test_a_reply_the_vendor_cut_is_an_unpaid_failure_retried(store, server, tmp_path, style):
    (result,), _ = ask(store, server, tmp_path, style)
    assert result.outcome == "ok" and "brush.circle(300, 300, 28)" in result.content
    first, second = rows(store)
    assert first["outcome"] == "http_error" and first["failure"].startswith("vendor/")
    assert first["response"]  # what came is kept, for the record, and never used
    assert llm.paid_reply(store, "k")[0] == second["id"]


def test_a_reply_cut_in_an_earlier_run_is_never_reused(store):
    """A reply stored as paid before cuts were read (finish_reason insufficient_system_resource)
    is not the model's work: a rerun asks again instead of reusing half a program."""
    from refpool.core.contracts import ModelCall
    from refpool.core.store import model_calls

    call = ModelCall(model="m", base_url="u", purpose="coder", messages=[], params={},
                     outcome="ok", response="half", job_key="old",
                     finish_reason="insufficient_system_resource")  # fmt: skip
    model_calls.save(store, call)
    assert llm.paid_reply(store, "old") is None


def test_a_stream_that_opens_with_keep_alive_comments_is_read(store, server, tmp_path):
    (result,), _ = ask(store, server, tmp_path, "stream-keepalive")
    assert result.outcome == "ok" and "brush.circle" in result.content
    assert len(server.calls("stream-keepalive")) == 1


@pytest.mark.parametrize("style", ["busy-retry-after-0", "empty-200", "proxy-502"])
def test_an_outage_that_repeats_identically_is_retried_not_refused(store, server, tmp_path, style):
    (result,), ends = ask(store, server, tmp_path, style)
    assert result.outcome == "ok" and len(server.calls(style)) == 4 and not ends.disabled


def test_retry_after_zero_is_no_advice_so_the_retries_back_off(
    store, server, tmp_path, monkeypatch
):
    monkeypatch.setattr(llm, "RETRY_BASE_S", 0.2)
    ask(store, server, tmp_path, "busy-retry-after-0")
    times = [t for _, t, _, _ in server.calls("busy-retry-after-0")]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert gaps[0] >= 0.15 and gaps[1] > gaps[0]  # exponential backoff, not a hammer


def test_a_wait_stated_in_words_is_honoured(store, server, tmp_path):
    (result,), _ = ask(store, server, tmp_path, "retry-in-words")
    first, second = (t for _, t, _, _ in server.calls("retry-in-words"))
    assert result.outcome == "ok" and second - first >= 1.2


def test_a_reset_hours_ahead_stops_the_model_once_saying_when(store, server, tmp_path):
    results, ends = ask(store, server, tmp_path, "daily-cap-6h", keys=("a", "b", "c"))
    assert len(server.calls("daily-cap-6h")) == 1  # the other requests were not sent
    why = ends.disabled["daily-cap-6h"]
    assert "in 6 h 0 min (at " in why and "UTC" in why and "retry_budget_s" in why
    assert results[0].failure.startswith("vendor/")  # the vendor's limit, not the request's
    ask(store, server, tmp_path, "daily-cap-6h", keys=("a",))
    assert len(server.calls("daily-cap-6h")) == 2  # a rerun asks again: it may have reset


def test_a_refused_field_is_adapted_and_recorded(store, server, tmp_path):
    style = "row:max-tokens-renamed"
    results, ends = ask(store, server, tmp_path, style, keys=("a", "b"))
    assert all(r.outcome == "ok" for r in results)
    sent = [body for _, _, body, _ in server.calls(style)]
    assert "max_tokens" in sent[0] and "max_completion_tokens" not in sent[0]
    assert all("max_completion_tokens" in b and "max_tokens" not in b for b in sent[1:])
    assert len(sent) == 3 and ends.adaptations == {style: ["max_completion_tokens"]}
    recorded = rows(store)
    assert recorded[0]["failure"] == "config/request_field/max-tokens-renamed"
    assert json.loads(recorded[1]["params"])["adapted"] == ["max_completion_tokens"]


def test_an_entry_that_forbids_adapting_stops_the_model_naming_the_field(store, server, tmp_path):
    style = "row:temperature-refused"
    results, ends = ask(store, server, tmp_path, style, keys=("a", "b"), adapt=False)
    assert len(server.calls(style)) == 1 and results[0].outcome == "http_error"
    assert (
        '"temperatures"' in ends.disabled[style]
        and "models file is the cause" in (ends.disabled[style])
    )
