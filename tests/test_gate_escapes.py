"""The gate against a determined cheater, in the real Chromium.

Each test here was an escape of the earlier harness: sketch code running with the guards
down, a verdict forged from an error, a page poisoned for the next job, a request leaving
the page. The hostile corpus (tests/hostile/) covers the one-job attacks; these need a
second job, a listening server, or a look at the verdict itself.
"""

from __future__ import annotations

import io
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
        baseline = r.render(TRIVIAL, seed=5)
        assert baseline.accepted, baseline.gate.violations
        for n, poison in enumerate(POISONS):
            r.render((ESCAPES / poison).read_text(), seed=1, skip_static=True)
            after = r.render(TRIVIAL + f"\n// a new cache key {n}\n", seed=5)
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
