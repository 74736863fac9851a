"""Nothing in flight is lost (issue 33, item 9): a model request in flight when the user presses
Ctrl-C is recorded as interrupted, with what is known of it (model, prompt, parameters, the
wait); the run says so, the rerun asks it again (it was never paid for as a reply), and the
generate summary counts it."""

from __future__ import annotations

import os
import signal
import threading
import time

import fake_vendor as fv
import pytest

from refpool.core import errors
from refpool.core.store import model_calls


def _ctrl_c_once_in_flight(vendor: fv.FakeVendor) -> threading.Thread:
    """Press Ctrl-C (SIGINT to this process) once the vendor holds a request."""

    def press() -> None:
        deadline = time.monotonic() + 60
        while vendor.in_flight == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=press, daemon=True)
    thread.start()
    return thread


@pytest.mark.browser
def test_a_request_in_flight_at_ctrl_c_is_recorded_and_asked_again(store, photo_id, cli, tmp_path):
    assert threading.current_thread() is threading.main_thread()  # SIGINT reaches asyncio.run
    args = ("generate", "--photos", photo_id, "--generator", "polite", "--candidates", 1,
            "--rounds", 1, "--no-progress")  # fmt: skip
    with fv.FakeVendor() as vendor:
        models = fv.models_file(tmp_path / "m.json", vendor.base_url, ["polite"])
        vendor.delay_s = 5.0  # the reply is slow: Ctrl-C comes while it is awaited
        presser = _ctrl_c_once_in_flight(vendor)
        stopped = cli(*args, "--models-file", models)
        presser.join()
        assert stopped.code == errors.EXIT_INTERRUPTED
        assert "1 model request(s) in flight were recorded as interrupted" in stopped.err
        (call,) = model_calls.with_outcome_after(store, 0, "interrupted")
        assert call.model == "fake/polite" and call.purpose == "coder" and call.job_key
        assert any(m.get("role") == "user" for m in call.messages)  # the prompt as it was sent
        assert call.params.get("temperature") == 0.6
        assert call.latency_ms and call.latency_ms >= 150
        assert "Ctrl-C" in (call.error or "") and (call.cost_usd or 0) == 0
        assert call.failure and call.failure.startswith("user/")
        assert not store.query("SELECT 1 FROM candidates")

        vendor.delay_s = 0.0
        again = cli(*args, "--models-file", models)
    assert again.code == 0, again.err
    assert len(vendor.calls("polite")) == 2  # asked again: the first was never answered
    assert "interrupted: 1 request(s) were in flight" in again.out
    assert "1 candidates (1 new this run), 1 accepted" in again.out
    calls = model_calls.by_job_keys(store, [call.job_key or ""])
    assert [c.outcome for c in calls] == ["interrupted", "ok"]
