"""`serve-renderer --ray`: replicas on a real local Ray cluster (127.0.0.1), one endpoint.

One module-scoped cluster and deployment (two replicas of one slot) keeps this to a single
Ray start-up; the last test's own tiny deployment shares the cluster.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from render_server import get, render_json, variant

ray = pytest.importorskip("ray")
from ray import serve  # noqa: E402

from renderer import RenderConfig  # noqa: E402
from renderer.ray_serve import APP_NAME, REPLICA, RayBackend, deploy, start_local_cluster  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    os.environ["REFPOOL_HOME"] = str(tmp_path_factory.mktemp("ray-home"))
    start_local_cluster(num_cpus=2)
    try:
        yield deploy(RenderConfig(slots=1, deadline_s=120), 2, "127.0.0.1", 0, queue=4)
    finally:
        serve.shutdown()
        ray.shutdown()


def replica_pids() -> set[int]:
    """Live replica processes of this cluster (Ray titles them `ray::ServeReplica:APP:NAME`)."""
    title = f"ServeReplica:{APP_NAME}:{REPLICA}".encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if cmdline.startswith(b"ray::" + title) and state != "Z":
                found.add(int(entry.name))
    return found


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, what
        time.sleep(0.5)
    return value


def browsers_under(pid: int) -> int:
    """Chromium processes descended from `pid`."""
    parent, name = {}, {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
                )
                name[int(entry.name)] = (entry / "comm").read_text().strip()
            except OSError:
                continue

    def descends(p: int) -> bool:
        while p > 1:
            p = parent.get(p, 0)
            if p == pid:
                return True
        return False

    return sum(1 for p, comm in name.items() if comm.startswith("chrom") and descends(p))


def test_two_replicas_each_with_its_own_browser_behind_one_endpoint(endpoint):
    status, health = get(f"{endpoint}/healthz")
    assert status == 200 and json.loads(health)["replicas"] == 2
    assert json.loads(health)["env_pixels"] is False
    pids = wait_for(lambda: len(replica_pids()) == 2 and replica_pids(), 120, "two replicas")
    assert all(browsers_under(pid) >= 1 for pid in pids)
    replies: list = []
    threads = [
        threading.Thread(
            target=lambda n=n: replies.append(render_json(endpoint, variant("trivial.js", n)))
        )
        for n in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [status for status, _, _ in replies] == [200, 200]
    assert all(reply["accepted"] for _, _, reply in replies)
    status, text = get(f"{endpoint}/metrics")
    assert b'refpool_renders_total{outcome="accepted"} 2' in text


def test_a_dead_replica_is_replaced_and_its_render_retried_not_charged(endpoint):
    before = wait_for(lambda: len(replica_pids()) == 2 and replica_pids(), 120, "two replicas")
    reply: dict = {}

    def send() -> None:
        status, _, body = render_json(endpoint, variant("yellow_hibiscus.js", 1), seed=3)
        reply.update(status=status, body=body)

    sender = threading.Thread(target=send)
    sender.start()
    time.sleep(1.5)  # the render is on a replica now
    for pid in before:  # both replicas die (the one painting, and the spare)
        os.kill(pid, signal.SIGKILL)
    sender.join(timeout=400)
    assert reply["status"] == 200 and reply["body"]["accepted"], reply
    after = wait_for(lambda: len(replica_pids()) == 2 and replica_pids(), 240, "replacements")
    assert not (after & before)  # new processes took the dead ones' places


def test_a_render_lost_twice_is_an_infrastructure_error(endpoint, tmp_path):
    """Every replica of this deployment dies mid-render: one retry, then infra_error."""
    deaths = tmp_path / "deaths"

    @serve.deployment(name="Dies", ray_actor_options={"num_cpus": 0})
    class Dies:
        def render(self, source: str, seed: int, profile: str | None) -> None:
            with open(deaths, "a") as log:
                log.write(f"{os.getpid()}\n")
            os._exit(1)

    handle = serve.run(Dies.bind(), name="dies", route_prefix="/dies")
    result = asyncio.run(RayBackend(handle, 1, 1).render("function setup() {}", 0, None))
    serve.delete("dies")
    assert result.infra_error and "lost with its replica 2 times" in result.infra_error
    assert not result.accepted and result.gate.violations == []  # nothing charged to the sketch
    # Tried twice, each time on a fresh replica. Ray Serve's router may itself re-send a request
    # whose replica became unreachable (seen in CI: three deaths for our two attempts), so the
    # count of deaths is at least our two attempts, never one replica twice.
    pids = deaths.read_text().split()
    assert len(pids) >= 2 and len(set(pids)) == len(pids)
