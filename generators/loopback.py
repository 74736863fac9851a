"""A loopback server speaking the OpenAI chat-completions protocol, for tests and benchmarks.

It answers POST /v1/chat/completions from a script of replies, so the real `openai` client
and the production code path run unchanged. Each script entry is a dict:
    {"content": str, "reasoning": str, "finish": "stop"|"length", "delay": seconds,
     "status": 429|500|..., "tokens": (prompt, completion)}
When the script runs out, `default` (a callable taking the request body) answers.

    with LoopbackOpenAI(script=[{"status": 429}, {"content": "```js ...```"}]) as server:
        base_url = server.base_url   # http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class LoopbackOpenAI:
    def __init__(
        self, script: list[dict] | None = None, default: Callable[[dict], dict] | None = None
    ) -> None:
        self.script = deque(script or [])
        self.default = default or (lambda body: {"content": "no script left"})
        self.requests: list[dict] = []  # request bodies, in arrival order
        self.headers: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests the server held at once
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> LoopbackOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict) -> dict:
        with self._lock:
            self.requests.append(body)
            return self.script.popleft() if self.script else self.default(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.headers.append(dict(self.headers))
                reply = outer._next(body)
                with outer._lock:
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                try:
                    if reply.get("delay"):
                        time.sleep(reply["delay"])
                finally:
                    with outer._lock:
                        outer.in_flight -= 1
                if reply.get("status"):
                    headers = {"retry-after": "0"} if reply["status"] == 429 else {}
                    self._send(
                        reply["status"],
                        {"error": {"message": "scripted error", "type": "rate_limit"}},
                        headers,
                    )
                    return
                prompt_tokens, completion_tokens = reply.get("tokens", (100, 200))
                message = {"role": "assistant", "content": reply.get("content", "")}
                if reply.get("reasoning"):
                    message["reasoning_content"] = reply["reasoning"]
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(outer.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "loopback"),
                        "choices": [
                            {
                                "index": 0,
                                "message": message,
                                "finish_reason": reply.get("finish", "stop"),
                            }
                        ],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens,
                        },
                    },
                )

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        return Handler


def models_file(
    path: Path, base_url: str, names: Sequence[str] = ("loopback",), **overrides: Any
) -> str:
    """Write a models JSON pointing `names` at a loopback server; returns its path."""
    entry = {
        "model": "loopback-coder",
        "base_url": base_url,
        "key_env": None,
        "accepts_images": False,
        "temperatures": [0.6, 0.9, 1.1],
        "max_tokens": 2400,
        "timeout_s": 30,
        "concurrency": 4,
        "price_per_mtok": {"input": 0.5, "output": 1.5},
    } | overrides
    path.write_text(json.dumps({"models": {n: dict(entry) for n in names}}))
    return str(path)
