"""A fake model vendor that answers the way real OpenAI-compatible servers do.

Unlike generators/loopback.py (which answers politely, for unit tests), this server replays
the replies that real routers and inference servers (HF router, vLLM, SGLang, Ollama,
llama.cpp) send: a 200 with a cut-off JSON body, reasoning inline in `<think>` tags with an
unfinished draft inside, two code blocks, a first block in another language, prose before bare
code, CRLF line endings, errors carried by a 200, empty choices, a critic that cannot take
images, a slow drip of bytes, Retry-After in both forms, refusals in `message.refusal` or with
curly apostrophes, sloppy critic JSON, and code only in `reasoning_content`.

It is a real HTTP server on loopback, so the `openai` client and the production code path run
unchanged. The model id of a request picks its style: `fake/<style>`. Each style sees how many
requests that model id has had (`nth`), so "bad once, then good" is a style too.
"""

from __future__ import annotations

import email.utils
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SKETCH = """function setup() {
  createCanvas(600, 600, WEBGL);
  angleMode(DEGREES);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background('#f6efe2');
  brush.noStroke();
  for (let i = 0; i < 5; i++) {
    brush.fill('#e2583e', 200);
    brush.fillBleed(0.25, 'out');
    brush.circle(300 + cos(i * 72) * 60, 300 + sin(i * 72) * 60, 55, 0.3);
  }
  brush.fill('#8e1b2c', 225);
  brush.circle(300, 300, 28);
}"""
# A complete sketch the gate rejects (a p5 primitive): the draft that must not win.
DRAFT = SKETCH.replace("brush.circle(300, 300, 28);", "rect(280, 280, 40, 40);")
CUT_DRAFT = SKETCH[: len(SKETCH) // 2]  # an unfinished draft, as thinking leaves it
FENCED = f"```js\n{SKETCH}\n```"
CRITIC = {
    "scores": {"fidelity": 6, "watercolour": 7, "composition": 8, "coverage": 5},
    "advice": "Enlarge the petals by a third.",
    "summary": "a decent start",
}


@dataclass
class Answer:
    """One HTTP answer: a status, headers and a body, optionally dripped byte by byte."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    drip_s: float = 0.0  # seconds between bytes
    drip_for_s: float = 0.0  # stop dripping (and close) after this long


def completion(
    content: str | None = "",
    *,
    reasoning: str | None = None,
    refusal: str | None = None,
    finish: str = "stop",
    model: str = "fake",
) -> Answer:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if refusal is not None:
        message["refusal"] = refusal
    payload = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 340, "total_tokens": 460},
    }
    return Answer(body=json.dumps(payload).encode())


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Answer:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    return Answer(status, body.encode(), headers or {})


def _once(bad: Callable[[], Answer]) -> Callable[[int], Answer]:
    """Bad on the first request of this model id, a good sketch afterwards."""
    return lambda nth: bad() if nth == 0 else completion(FENCED)


def _first_block(tag: str, body: str) -> Callable[[int], Answer]:
    text = f"Settings first:\n```{tag}\n{body}\n```\nAnd now the sketch itself:\n{FENCED}\nEnjoy."
    return lambda nth: completion(text)


_HTML = (
    '<!doctype html>\n<html><head>\n<script src="https://cdn.jsdelivr.net/npm/p5"></script>\n'
    f"</head><body>\n<script>\n{SKETCH}\n</script>\n</body></html>"
)
_TRUNCATED = completion(FENCED).body[:300]  # cut inside the content string
_LENIENT = """Here is my assessment:
```json
{
  // scores out of ten
  "Scores": {"Fidelity": "6/10", "Watercolor": 7, "composition": "8", "coverage": 5,},
  "advice": "Enlarge the petals by a third.",
  "summary": "a decent start",
}
```
Keep the {soft} edges and {paper} showing."""
_BRACES_AFTER = (
    '{"fidelity": 6, "watercolor": 7.5, "Composition": "8 out of 10", "coverage": "50%",'
    ' "advice": "More layers."}\nNote: {this} is not {json}.'
)

CODER_STYLES: dict[str, Callable[[int], Answer]] = {
    "polite": lambda nth: completion(f"Here you go:\n{FENCED}"),
    "truncated-json": _once(lambda: Answer(body=_TRUNCATED)),
    "error-200": _once(
        lambda: Answer(body=b'{"error": {"message": "upstream model overloaded", "code": 503}}')
    ),
    "empty-choices": _once(
        lambda: Answer(
            body=json.dumps({"id": "x", "object": "chat.completion", "choices": []}).encode()
        )
    ),
    "kimi-think": lambda nth: completion(
        "<think>The user wants a flower. Draft:\n```js\n"
        + CUT_DRAFT
        + "\nHmm, better to restart cleanly.</think>\n\nHere is the sketch:\n"
        + FENCED
    ),
    "two-blocks": lambda nth: completion(
        f"First attempt:\n```js\n{DRAFT}\n```\nWait, `rect` is not allowed. Here is the"
        f" corrected version:\n{FENCED}"
    ),
    "first-html": lambda nth: completion(f"A complete page:\n```html\n{_HTML}\n```"),
    "first-json": _first_block("json", '{"petals": 5, "palette": ["#e2583e"]}'),
    "first-text": _first_block("text", "petals: 5 {outer ring} then centre"),
    "first-jsx": _first_block("jsx", "const Flower = () => <div>{petals}</div>;"),
    "first-ts": _first_block("ts", "const petals: number = 5;"),
    "prose-bare": lambda nth: completion("Sure! Here's a watercolour sketch:\n" + SKETCH),
    "crlf": lambda nth: completion(f"Here you go:\n{FENCED}\n".replace("\n", "\r\n")),
    "refusal-field": lambda nth: completion("", refusal="I can't help with that request."),
    "curly-refusal": lambda nth: completion(
        "I\u2019m sorry, but I can\u2019t help with creating that image."
    ),
    "reasoning-only": lambda nth: completion("", reasoning=f"Let me write it.\n{FENCED}"),
    "slow-drip": lambda nth: (
        Answer(body=completion(FENCED).body, drip_s=0.2, drip_for_s=5)
        if nth == 0
        else completion(FENCED)
    ),
    "retry-after-seconds": lambda nth: (
        error(429, "slow down", {"retry-after": "1"}) if nth == 0 else completion(FENCED)
    ),
    "retry-after-date": lambda nth: (
        error(
            429, "slow down", {"retry-after": email.utils.formatdate(time.time() + 2, usegmt=True)}
        )
        if nth == 0
        else completion(FENCED)
    ),
    "key-echo-401": lambda nth: error(
        401, "Invalid credentials in Authorization header: hf_S****T123"
    ),
}
CRITIC_STYLES: dict[str, Callable[[int], Answer]] = {
    "critic-polite": lambda nth: completion(json.dumps(CRITIC)),
    "critic-lenient": lambda nth: completion(_LENIENT if nth % 2 == 0 else _BRACES_AFTER),
    "critic-no-images": lambda nth: error(400, "image input not supported for this model"),
    "critic-prose": lambda nth: completion("Lovely petals, well done!"),
}
STYLES = CODER_STYLES | CRITIC_STYLES


class FakeVendor:
    """The fake server. `requests` holds (model id, arrival time.time(), body, headers)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, float, dict, dict[str, str]]] = []
        self.seen: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.delay_s = 0.0  # added to every answer (to hold requests in flight)
        self.dropped = 0  # answers the client gave up on
        # Answers a model id that names no style (the docs' own model names); None: a 404.
        self.fallback: Callable[[dict], Answer] | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeVendor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def calls(self, style: str) -> list[tuple[str, float, dict, dict[str, str]]]:
        return [r for r in self.requests if r[0] == f"fake/{style}"]

    def _answer(self, body: dict, headers: dict[str, str]) -> Answer:
        model = str(body.get("model", ""))
        with self._lock:
            nth = self.seen[model]
            self.seen[model] += 1
            self.requests.append((model, time.time(), body, headers))
        from fake_vendor_replies import JUDGE_STYLES, REPLY_STYLES  # reply shapes (issue 21)

        judge = JUDGE_STYLES.get(model.removeprefix("fake/"))
        if judge is not None:  # a judge sees the two images it is asked about
            return judge(body)
        # -- failure shapes (issue 21, transport): tests/fake_vendor_failures.py --------------
        from fake_vendor_failures import FAILURE_STYLES, row_style

        name = model.removeprefix("fake/")
        failing = FAILURE_STYLES.get(name) or row_style(name)
        if failing is not None:
            return failing(nth, body)
        # -- end of failure shapes ------------------------------------------------------------
        from fake_vendor_judge import JUDGE_REASON_STYLES  # verdict forms, reasons (issue 31)

        reasoned = JUDGE_REASON_STYLES.get(model.removeprefix("fake/"))
        if reasoned is not None:
            return reasoned(nth, body)
        from fake_vendor_provenance import PROVENANCE_STYLES  # served model, keys (issue 31)

        served = PROVENANCE_STYLES.get(model.removeprefix("fake/"))
        if served is not None:
            return served(nth, body)
        style = (STYLES | REPLY_STYLES).get(model.removeprefix("fake/"))
        if style is None and self.fallback is not None:
            return self.fallback(body)
        if style is None:
            return error(404, f"The model `{model}` does not exist.")
        return style(nth)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        from fake_vendor_provenance import served_as_asked  # names the model asked for

        vendor = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                answer = served_as_asked(body, vendor._answer(body, dict(self.headers)))
                with vendor._lock:
                    vendor.in_flight += 1
                    vendor.max_in_flight = max(vendor.max_in_flight, vendor.in_flight)
                try:
                    time.sleep(vendor.delay_s)
                    self._send(answer)
                except (BrokenPipeError, ConnectionResetError):
                    with vendor._lock:
                        vendor.dropped += 1
                finally:
                    with vendor._lock:
                        vendor.in_flight -= 1

            def _send(self, answer: Answer) -> None:
                self.send_response(answer.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer.body)))
                for k, v in answer.headers.items():
                    self.send_header(k, v)
                if answer.drip_s:
                    self.send_header("connection", "close")
                self.end_headers()
                if not answer.drip_s:
                    self.wfile.write(answer.body)
                    self.wfile.flush()
                    return
                stop = time.monotonic() + answer.drip_for_s
                for i in range(len(answer.body)):
                    if time.monotonic() > stop:
                        self.close_connection = True
                        return
                    self.wfile.write(answer.body[i : i + 1])
                    self.wfile.flush()
                    time.sleep(answer.drip_s)

        return Handler


def any_role(body: dict) -> Answer:
    """A polite answer in whatever role the request plays, read from the prompt it was sent:
    the judge's question, the critic's watercolour teacher, or else a coder's brief."""
    from fake_vendor_replies import JUDGE_STYLES

    asked = json.dumps(body)
    if "better watercolour painting" in asked:
        return JUDGE_STYLES["judge-bare"](body)
    if "watercolour teacher" in asked:
        return completion(json.dumps(CRITIC))
    return completion(FENCED)


def models_file(path: Path, base_url: str, styles: list[str], **overrides: Any) -> str:
    """A models file naming each style as a model (`fake/<style>`), keyless, fast retries."""
    entries = {}
    for style in styles:
        critic = style.startswith("critic")
        judge = style.startswith("judge")
        entries[style] = {
            "model": f"fake/{style}",
            "base_url": base_url,
            "accepts_images": critic or judge,
            "roles": ["critic"] if critic else ["judge"] if judge else ["coder"],
            "temperatures": [0.6],
            "max_tokens": 2400,
            "timeout_s": 1.5 if style == "slow-drip" else 30,
            "concurrency": 4,
        } | overrides
    path.write_text(json.dumps({"models": entries}))
    return str(path)
