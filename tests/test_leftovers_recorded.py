"""What earlier runs' recorded failures say about asking again (generators.recorded): read by
the one table and the one repeat rule of generators.vendor, as when they happened."""

from __future__ import annotations

import pytest

from generators import recorded
from refpool.core.contracts import ModelCall
from refpool.core.store import model_calls

PARAMS = {"temperature": 0.6, "max_tokens": 2400, "timeout_s": 30}


def fail_twice(store, outcome: str, error: str, status: int | None) -> None:
    for _ in range(2):
        call = ModelCall(
            model="fake/m",
            base_url="http://127.0.0.1:9/v1",
            purpose="coder",
            messages=[{"role": "user", "content": "paint"}],
            params=PARAMS,
            outcome=outcome,
            error=error,
            job_key="job/1",
            http_status=status,
        )
        model_calls.save(store, call)


@pytest.mark.parametrize(
    ("outcome", "error"),
    [("timeout", "no reply within 30 s"), ("http_error", "connection failed: APIConnectionError")],
)
def test_no_answer_twice_is_asked_again(store, outcome, error):
    fail_twice(store, outcome, error, None)  # load, not a verdict on the request
    assert recorded.refused_before(store, "job/1", "coder", PARAMS) is None


def test_the_same_server_failure_twice_is_asked_again(store):
    fail_twice(store, "http_error", "HTTP 500: boom", 500)  # an outage repeats by nature
    assert recorded.refused_before(store, "job/1", "coder", PARAMS) is None


def test_a_refusal_that_came_without_a_status_is_read_as_when_it_happened(store):
    # the client raised before a status was read, carrying the vendor's moderation text: the
    # call was not retried then (vendor.classify_failure), so a rerun does not pay for it again
    error = "APIError: Input was flagged by moderation"
    fail_twice(store, "http_error", error, None)
    refused = recorded.refused_before(store, "job/1", "coder", PARAMS)
    assert refused is not None and refused.permanent and "flagged" in refused.error
