"""`refpool serve-renderer`: the HTTP service a trainer talks to, through the real CLI.

One server (one slot, a queue of one) serves the module; the shutdown test starts its own.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import signal
import subprocess
import threading
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families
from render_server import HERE, REFPOOL, get, post, render_json, serve_renderer, variant

from renderer.http_api import MAX_BODY_BYTES, MAX_SOURCE_CHARS

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    home = tmp_path_factory.mktemp("service-home")
    with serve_renderer("--slots", "1", "--queue", "1", "--deadline", "120", home=home) as server:
        yield server


def metrics(url: str) -> dict[str, float]:
    status, body = get(f"{url}/metrics")
    assert status == 200
    samples = {}
    for family in text_string_to_metric_families(body.decode()):  # a real Prometheus parser
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            samples[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return samples


def declare_oversized_body(url: str) -> tuple[int, bytes]:
    """Announce a body over the limit and send none of it: the answer comes first."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.putrequest("POST", "/render")
    conn.putheader("Content-Type", "text/javascript")
    conn.putheader("Content-Length", str(MAX_BODY_BYTES + 1))
    conn.endheaders()
    reply = conn.getresponse()
    try:
        return reply.status, reply.read()
    finally:
        conn.close()


def test_bad_input_is_a_422_naming_the_field_and_the_server_stays_up(service):
    url = f"{service.url}/render"
    cases = {
        "source": {"source": 5},
        "seed": {"source": "function setup() {}", "seed": "seven"},
        "profile": {"source": "function setup() {}", "profile": "lenient"},
        "colour": {"source": "function setup() {}", "colour": "red"},
    }
    for field, body in cases.items():
        status, _, reply = post(url, json.dumps(body).encode())
        reply = json.loads(reply)
        assert status == 422, (field, reply)
        assert [f["field"] for f in reply["fields"]] == [field]
        assert field in reply["error"]
    status, _, reply = post(url, b"[1, 2]")
    assert status == 422 and "JSON object" in json.loads(reply)["error"]
    status, _, reply = post(url, b"{not json")
    assert status == 422 and "invalid JSON" in json.loads(reply)["error"]

    # The size limit: a source over it is named with the limit; a body far over it is
    # refused before it is read.
    status, _, reply = post(url, json.dumps({"source": "x" * (MAX_SOURCE_CHARS + 1)}).encode())
    assert status == 422 and str(MAX_SOURCE_CHARS) in json.loads(reply)["error"]
    status, reply = declare_oversized_body(service.url)
    assert status == 413 and str(MAX_SOURCE_CHARS) in json.loads(reply)["error"]
    assert get(f"{service.url}/healthz")[0] == 200


def test_renders_json_png_and_raw_programs(service):
    status, _, reply = render_json(service.url, variant("trivial.js", 1), seed=1)
    assert status == 200, reply
    assert reply["accepted"] and reply["infra_error"] is None and reply["violations"] == []
    assert reply["render_ms"] > 0 and reply["queued_ms"] >= 0 and reply["coverage"] > 0.005
    assert base64.b64decode(reply["png_base64"]).startswith(b"\x89PNG")

    body = json.dumps({"source": variant("trivial.js", 2)}).encode()
    status, headers, png = post(f"{service.url}/render", body, Accept="image/png")
    assert status == 200 and png.startswith(b"\x89PNG")
    assert json.loads(headers["X-Refpool-Result"])["accepted"]

    # A raw program with ?seed=: a sketch's rejection is a 200 with its violations.
    hostile = (HERE / "hostile" / "text_escape.js").read_bytes()
    status, _, reply = post(f"{service.url}/render?seed=2", hostile, "text/javascript")
    reply = json.loads(reply)
    assert status == 200 and not reply["accepted"] and reply["violations"][0]["code"] == "text"

    status, health = get(f"{service.url}/healthz")
    health = json.loads(health)
    assert status == 200 and health["ok"] and health["lib_versions"]["p5.brush"] == "2.2.2"
    assert health["env_pixels"] is False  # a trainer can tell which pixels it is served


def test_a_full_queue_is_a_503_with_retry_after_never_a_wait(service):
    """One slot and a queue of one: of three renders sent at once, the third is refused."""
    before = metrics(service.url)
    replies: list[tuple[int, object, dict]] = []

    def send(n: int) -> None:
        replies.append(render_json(service.url, variant("yellow_hibiscus.js", n)))

    threads = [threading.Thread(target=send, args=(n,)) for n in range(3)]
    started = time.monotonic()
    for t in threads:
        t.start()
        time.sleep(0.2)  # in order: two are admitted before the third arrives
    threads[2].join()
    refused_after = time.monotonic() - started
    for t in threads:
        t.join()
    statuses = sorted(status for status, _, _ in replies)
    assert statuses == [200, 200, 503], [r[2] for r in replies]
    status, headers, reply = next(r for r in replies if r[0] == 503)
    assert int(headers["Retry-After"]) >= 1 and "busy" in reply["error"]
    assert refused_after < 5  # answered at once, not after the renders ahead of it
    after = metrics(service.url)
    assert after["refpool_renders_refused_total"] == before["refpool_renders_refused_total"] + 1


def test_metrics_count_renders_by_outcome_with_a_time_histogram(service):
    before = metrics(service.url)
    render_json(service.url, variant("trivial.js", 3))
    render_json(service.url, variant("empty.js", 3))  # refused by the gate
    after = metrics(service.url)
    accepted, rejected = "outcome=accepted", "outcome=rejected"
    assert (
        after[f"refpool_renders_total{{{accepted}}}"]
        == before[f"refpool_renders_total{{{accepted}}}"] + 1
    )
    assert (
        after[f"refpool_renders_total{{{rejected}}}"]
        == before[f"refpool_renders_total{{{rejected}}}"] + 1
    )
    assert after["refpool_render_seconds_count"] == before["refpool_render_seconds_count"] + 2
    assert after["refpool_render_seconds_bucket{le=+Inf}"] == after["refpool_render_seconds_count"]
    assert after["refpool_render_seconds_sum"] > before["refpool_render_seconds_sum"]
    assert after["refpool_queue_depth"] == 0 and after["refpool_renders_in_flight"] == 0


def test_sigterm_finishes_the_render_in_flight(tmp_path):
    with serve_renderer("--slots", "1", "--no-cache", "--deadline", "120", home=tmp_path) as server:
        reply: dict = {}

        def send() -> None:
            status, _, body = render_json(server.url, variant("yellow_hibiscus.js", 9), seed=4)
            reply.update(status=status, body=body, at=time.monotonic())

        sender = threading.Thread(target=send)
        sender.start()
        deadline = time.monotonic() + 60
        while metrics(server.url)["refpool_renders_in_flight"] < 1:
            assert time.monotonic() < deadline, "the render never started"
            time.sleep(0.05)
        signalled = time.monotonic()
        os.kill(server.proc.pid, signal.SIGTERM)
        sender.join(timeout=240)
        # uvicorn re-raises the signal once drained: the conventional exit for a service
        assert server.proc.wait(timeout=120) in (0, -signal.SIGTERM)
    assert reply["at"] > signalled  # the render was in flight when the signal came
    assert reply["status"] == 200 and reply["body"]["accepted"]
    assert base64.b64decode(reply["body"]["png_base64"]).startswith(b"\x89PNG")


def test_generate_renders_through_the_service(service, tmp_path, sample_photos):
    """`refpool generate --renderer URL`: the batch's renders are the service's renders."""
    home = tmp_path / "generate-home"
    env = {**os.environ, "REFPOOL_HOME": str(home)}
    cli = [*REFPOOL]
    imported = subprocess.run(
        [*cli, "photos", "import", str(sample_photos)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert imported.returncode == 0, imported.stderr
    before = metrics(service.url)
    run = subprocess.run(
        [
            *cli,
            "generate",
            "--renderer",
            service.url,
            "--candidates",
            "1",
            "--rounds",
            "1",
            "--no-progress",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    after = metrics(service.url)
    served = sum(after[k] - before[k] for k in after if k.startswith("refpool_renders_total"))
    assert served == 3  # one painting of each sample photo, each rendered by the service
    listed = subprocess.run(
        [*cli, "candidates", "list", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    rows = json.loads(listed.stdout)
    assert len(rows) == 3 and all(r["accepted"] and r["png"] for r in rows)
    assert not (home / "render-cache").exists()  # nothing rendered in this process
