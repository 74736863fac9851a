"""The gate against a determined cheater, in the real Chromium.

Each test here was an escape of the earlier harness: sketch code running with the guards
down, a verdict forged from an error, a page poisoned for the next job, a request leaving
the page. The hostile corpus (tests/hostile/) covers the one-job attacks; these need a
second job, a listening server, or a look at the verdict itself.
"""

from __future__ import annotations

import base64
import io
import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from refpool.core.contracts import Violation
from renderer.profiles import get_profile
from renderer.verdict import PageOutcome, gate_verdict, parse_outcome

HERE = Path(__file__).parent
ESCAPES = HERE / "escapes"
TRIVIAL = (HERE / "sketches" / "trivial.js").read_text()


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def test_an_error_without_a_violation_is_never_accepted():
    """A job that ends in "error" with nothing recorded was counted as accepted."""
    forged = parse_outcome('{"status": "error", "violations": [], "canvas": true, "paints": 3}')
    gate = gate_verdict(forged, get_profile("reference"))
    assert not gate.accepted
    assert [v.code for v in gate.violations] == ["runtime_error"]


def test_done_without_the_canvas_pixels_is_not_accepted():
    """Accepted needs a PNG read from the canvas itself: no picture, no pass."""
    outcome = PageOutcome("done", [], canvas=True, paints=2, png=None)
    assert not gate_verdict(outcome, get_profile("reference")).accepted
    flagged = PageOutcome("done", [Violation("text", "no")], canvas=True, paints=2)
    assert not gate_verdict(flagged, get_profile("reference")).accepted


@pytest.mark.browser
def test_css_on_the_page_cannot_change_the_judged_pixels(renderer):
    """The PNG is the canvas's own pixels, composited over white; not a page screenshot."""
    result = renderer.render(TRIVIAL, seed=21)
    assert result.accepted, result.gate.violations
    img = pixels(result.png)
    assert img.shape == (600, 600, 3)
    # the paper colour from background('#f6efe2') in the corner, the brush paint up top
    assert np.abs(img[5, 5] - np.array([0xF6, 0xEF, 0xE2])).max() <= 3
    assert np.abs(img[200:260, 250:350] - np.array([0xF6, 0xEF, 0xE2])).max() > 40


POISONS = ["poison_webgl_proto.js", "poison_head_style.js", "poison_lose_context.js"]


@pytest.mark.browser
def test_no_state_survives_into_the_next_job():
    """One slot: whatever a poisoner did to its page, the next sketch renders as before."""
    from renderer import RenderConfig, SyncRenderer

    with SyncRenderer(RenderConfig(slots=1, deadline_s=8)) as r:
        # Seed 3: at 5 the env's seeding paints trivial.js's circle too pale to count.
        baseline = r.render(TRIVIAL, seed=3)
        assert baseline.accepted, baseline.gate.violations
        for n, poison in enumerate(POISONS):
            r.render((ESCAPES / poison).read_text(), seed=1, skip_static=True)
            after = r.render(TRIVIAL + f"\n// a new cache key {n}\n", seed=3)
            assert after.infra_error is None, poison
            assert after.accepted, (poison, after.gate.violations)
            diff = np.abs(pixels(after.png) - pixels(baseline.png)).max(axis=2)
            assert (diff > 24).sum() < 200, poison


class _Recorder(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        type(self).hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def listener():
    class Handler(_Recorder):
        hits: list[str] = []

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], Handler.hits
    server.shutdown()
    server.server_close()


@pytest.mark.browser
def test_a_sketch_cannot_reach_a_loopback_server(renderer, listener):
    port, hits = listener
    source = (ESCAPES / "leak_open.js").read_text().replace("PORT", str(port))
    result = renderer.render(source, seed=1, skip_static=True)
    assert result.infra_error is None
    renderer.render(TRIVIAL + "\n// settle\n", seed=2)  # give a late request time to land
    assert hits == []


@pytest.mark.browser
def test_even_an_escaped_page_cannot_send_a_request(renderer, listener):
    """Defence in depth: code with the real window still gets nothing out (popup, link,
    fetch, image, prefetch), and the popup is recorded."""
    port, hits = listener
    inner = renderer.renderer
    url = f"http://127.0.0.1:{port}"
    attack = f"""async () => {{
        window.open("{url}/open");
        const a = document.createElement("a");
        a.href = "{url}/anchor"; a.target = "_blank";
        document.body.appendChild(a);
        a.dispatchEvent(new MouseEvent("click", {{bubbles: true, cancelable: true}}));
        HTMLElement.prototype.click.call(a);
        const l = document.createElement("link"); l.rel = "prefetch"; l.href = "{url}/prefetch";
        document.head.appendChild(l);
        try {{ await fetch("{url}/fetch", {{mode: "no-cors"}}); }} catch (e) {{}}
        await new Promise((r) => setTimeout(r, 500));
        return 1;
    }}"""

    async def run() -> None:
        pool = inner.pool
        slot = await pool.take()
        try:
            await slot.page.evaluate(attack)
        finally:
            pool.give_back(slot)

    renderer._call(run())
    assert hits == []


# --- round 3: the sketch runs in its own realm (renderer/sketch_worker.js) -----------------
ROUND3 = sorted(p for p in ESCAPES.glob("*.js") if p.read_text().startswith("// expect:"))


def expectation(source: str) -> tuple[list[str], float | None]:
    """(codes, None) for a sketch that must be refused; ([], C) for one that is defused."""
    head = source.splitlines()[0]
    defused = re.search(r"defused<([\d.]+)", head)
    if defused:
        return [], float(defused.group(1))
    return re.search(r"expect: ([\w|]+)", head).group(1).split("|"), None


@pytest.mark.browser
@pytest.mark.parametrize("path", ROUND3, ids=[p.stem for p in ROUND3])
def test_a_round_3_escape_is_contained(renderer, path):
    """A reported violation with the right code, or harmless: never paint that got past the
    facade, never an infrastructure error (which is retried and never scored)."""
    source = path.read_text().replace("PORT", "9")
    codes, defused = expectation(source)
    result = renderer.render(source, seed=3, deadline_s=4, skip_static=True)
    assert result.infra_error is None
    if defused is not None:
        assert not result.accepted or result.gate.coverage < defused
        return
    assert not result.accepted
    found = [v.code for v in result.gate.violations]
    assert set(found) & set(codes), result.gate.violations
    assert result.png is None


@pytest.mark.browser
def test_storage_written_by_one_job_is_not_read_by_the_next():
    """One slot, two jobs: the writer is refused, and the reader finds nothing to paint."""
    from renderer import RenderConfig, SyncRenderer

    with SyncRenderer(RenderConfig(slots=1, deadline_s=8)) as r:
        wrote = r.render((ESCAPES / "storage_write.js").read_text(), seed=1, skip_static=True)
        assert [v.code for v in wrote.gate.violations][:1] == ["forbidden_api"]
        read = r.render((ESCAPES / "storage_read.js").read_text(), seed=1, skip_static=True)
        assert read.infra_error is None
        assert "localStorage" in read.gate.violations[0].message
        assert read.png is None


@pytest.fixture
def udp_listener():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)
    yield sock
    sock.close()


@pytest.mark.browser
def test_webrtc_sends_no_udp_to_a_loopback_port(renderer, udp_listener):
    port = udp_listener.getsockname()[1]
    source = (ESCAPES / "rtc_udp.js").read_text().replace("PORT", str(port))
    result = renderer.render(source, seed=1, skip_static=True)
    assert [v.code for v in result.gate.violations] == ["forbidden_api"]
    assert "RTCPeerConnection" in result.gate.violations[0].message
    with pytest.raises(TimeoutError):
        udp_listener.recvfrom(2048)


@pytest.mark.browser
def test_even_the_painting_page_sends_no_webrtc_udp(renderer, udp_listener):
    """Defence in depth: the browser's WebRTC policy stops UDP from trusted pages too."""
    port = udp_listener.getsockname()[1]
    inner = renderer.renderer
    attack = f"""async () => {{
        const pc = new RTCPeerConnection({{iceServers: [{{urls: "stun:127.0.0.1:{port}"}}]}});
        pc.createDataChannel("x");
        await pc.setLocalDescription(await pc.createOffer());
        await new Promise((r) => setTimeout(r, 1500));
        pc.close();
        return 1;
    }}"""

    async def run() -> None:
        pool = inner.pool
        slot = await pool.take()
        try:
            await slot.page.evaluate(attack)
        finally:
            pool.give_back(slot)

    renderer._call(run())
    with pytest.raises(TimeoutError):
        udp_listener.recvfrom(2048)


@pytest.mark.browser
def test_work_left_running_does_not_slow_the_next_job():
    """The busy sketch times out; the worker is terminated, so the next job runs as fast as
    one that followed an honest sketch (well under the 27 s round 3 measured)."""
    from renderer import RenderConfig, SyncRenderer

    with SyncRenderer(RenderConfig(slots=1, deadline_s=3)) as r:
        plain = r.render(TRIVIAL, seed=2)
        busy = r.render((ESCAPES / "busy_after_answer.js").read_text(), seed=1, skip_static=True)
        assert [v.code for v in busy.gate.violations] == ["timeout"]
        assert busy.infra_error is None
        after = r.render(TRIVIAL + "\n// after the busy one\n", seed=2)
        assert after.accepted, after.gate.violations
        assert after.render_ms < max(3 * plain.render_ms, 6000)
        assert r.renderer.stats["browser_restarts"] == 0


def test_a_picture_of_another_size_is_rejected_however_it_was_made():
    """The backstop behind the page: only a 600x600 PNG is ever judged."""
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 40, 40)).save(buf, "PNG")
    url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    raw = json.dumps({"status": "done", "violations": [], "canvas": True, "paints": 1, "png": url})
    outcome = parse_outcome(raw, (600, 600))
    assert outcome.png is None
    gate = gate_verdict(outcome, get_profile("reference"))
    assert not gate.accepted
    assert [v.code for v in gate.violations] == ["canvas_size"]
    assert "64x64" in gate.violations[0].message


@pytest.mark.browser
@pytest.mark.parametrize(
    "name",
    ["fetch", "XMLHttpRequest", "WebSocket", "importScripts", "indexedDB", "caches",
     "OffscreenCanvas", "Worker", "createImageBitmap", "navigator", "self", "globalThis",
     "document", "postMessage", "setTimeout", "queueMicrotask", "location"],
)  # fmt: skip
def test_the_realm_reports_every_platform_global(renderer, name):
    """The worker's own globals are gone before the sketch runs; naming one is reported."""
    source = (
        "function setup() {\n  createCanvas(600, 600, WEBGL);\n"
        f"  const got = {name};\n"
        "  brush.noStroke(); brush.fill('#e2583e', 200); brush.circle(0, 0, 60);\n}\n"
    )
    result = renderer.render(source, seed=1, skip_static=True)
    assert [(v.code, v.line) for v in result.gate.violations] == [("forbidden_api", 3)]
    assert name in result.gate.violations[0].message


FORGED = [
    ("a raw p5 primitive", [{"op": "p5", "name": "rect", "args": [0, 0, 600, 600], "line": 1}]),
    ("a brush method off the profile", [{"op": "brush", "name": "wash", "args": [], "line": 1}]),
    (
        "a number that is not finite",
        [{"op": "p5", "name": "translate", "args": [1e400], "line": 1}],
    ),
    ("an unknown kind of call", [{"op": "eval", "name": "x", "args": [], "line": 1}]),
]


@pytest.mark.browser
@pytest.mark.parametrize("what,calls", FORGED, ids=[f[0] for f in FORGED])
def test_the_painting_page_checks_whatever_the_realm_sends(renderer, what, calls):
    """A worker that posts a forged call list (as a realm the sketch took over might) paints
    nothing: the page refuses the whole list as `tamper`."""
    from renderer.job import page_spec, realm_config

    inner = renderer.renderer
    forged = {"status": "done", "violations": [], "console": [], "paints": 1, "canvas": True,
              "frames": [[{"op": "canvas", "name": "createCanvas", "args": [], "line": 1}, *calls]]}  # fmt: skip
    script = f"postMessage({json.dumps(forged)});".encode()  # Infinity is a JS literal

    async def run() -> str:
        pool = inner.pool
        url = pool.server.job_url("forged" + str(abs(hash(what))))
        pool.server.add_job(url, script)
        config = realm_config(get_profile("reference"), 1, script_url=url, size=(600, 600),
                              max_frames=60, p5_facts=pool.p5_facts)  # fmt: skip
        spec = page_spec(
            "function setup() {}", config, worker_url=url, prefix_lines=0, deadline_s=5
        )
        slot = await pool.take()
        try:
            return await slot.page.evaluate(
                "([api, spec]) => window[api].run(spec)", [pool.api, spec]
            )
        finally:
            pool.give_back(slot)
            pool.server.drop_job(url)

    outcome = parse_outcome(renderer._call(run()))
    assert outcome.png is None
    assert [v.code for v in outcome.violations] == ["tamper"]
