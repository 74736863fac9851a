"""Start the real `refpool serve-renderer` in a subprocess and talk to it over loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REFPOOL = [sys.executable, "-c", "import sys; from refpool.cli import main; sys.exit(main())"]
HERE = Path(__file__).parent
SKETCHES = HERE / "sketches"
START_S = 240  # a loaded CI machine can take minutes to start Chromium


class Server:
    def __init__(self, proc: subprocess.Popen, url: str) -> None:
        self.proc = proc
        self.url = url

    def stop(self) -> int:
        """SIGTERM (what a supervisor sends), then the exit status."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@contextmanager
def serve_renderer(*args: str, home: Path) -> Iterator[Server]:
    env = {**os.environ, "REFPOOL_HOME": str(home)}
    proc = subprocess.Popen(
        [*REFPOOL, "serve-renderer", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    server = None
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the announcement, printed once the browser is up
        if "serving on" not in line:
            proc.kill()
            raise AssertionError(f"serve-renderer did not start: {line!r} {proc.stderr.read()}")
        server = Server(proc, line.split("serving on ", 1)[1].split()[0])
        yield server
    finally:
        if server is not None:
            server.stop()
        elif proc.poll() is None:
            proc.kill()


def post(url: str, body: bytes, content_type: str = "application/json", **headers: str) -> Any:
    """(status, headers, body bytes) of a POST, HTTP errors included."""
    request = urllib.request.Request(url, body, {"Content-Type": content_type, **headers})
    try:
        with urllib.request.urlopen(request, timeout=300) as reply:
            return reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def render_json(url: str, source: str, seed: int = 0) -> tuple[int, Any, dict]:
    status, headers, body = post(
        f"{url}/render", json.dumps({"source": source, "seed": seed}).encode()
    )
    return status, headers, json.loads(body)


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def variant(name: str, n: int) -> str:
    """A shared sketch under a new program hash, so no cache anywhere answers it."""
    return (SKETCHES / name).read_text() + f"\n// variant {n} {time.time_ns()}\n"
