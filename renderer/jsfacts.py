"""Facts about a sketch from acorn's AST, computed by a long-lived Node worker.

One worker (renderer/static_pass.js) answers one JSON line per program. Calls are serialised
by a lock and bounded by a deadline: a worker that overruns is killed and a fresh one
started on the next call. Acorn is linear in the program's size, so the deadline is a
backstop, not a budget.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from refpool.core.errors import RefpoolInfraError
from renderer.libserver import node_modules

WORKER = Path(__file__).resolve().parent / "static_pass.js"
DEADLINE_S = 5.0
MAX_SOURCE_CHARS = 400_000  # far beyond any sketch; refused before parsing


class StaticPassUnavailable(RefpoolInfraError, RuntimeError):
    """Node.js (or acorn) is missing, or the worker broke: the static pass cannot run."""


class StaticPassTimeout(RuntimeError):
    """The worker did not answer within the deadline."""


@dataclass(frozen=True)
class ParseError:
    message: str
    line: int | None
    column: int | None
    at_end: bool  # the parser ran out of input: a cut-off program


def _node() -> str:
    found = os.environ.get("REFPOOL_NODE") or shutil.which("node")
    if not found:
        raise StaticPassUnavailable(
            "Node.js is needed for the static pass: install it (apt-get install nodejs) "
            "or set REFPOOL_NODE to its path"
        )
    return found


class _Worker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._next_id = 0
        atexit.register(self.stop)

    def _start(self) -> subprocess.Popen[str]:
        env = dict(os.environ, REFPOOL_NODE_MODULES=str(node_modules()))
        node = _node()
        try:
            return subprocess.Popen(
                [node, "--max-old-space-size=512", str(WORKER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                env=env,
            )
        except OSError as exc:  # a wrong REFPOOL_NODE, or node not executable
            raise StaticPassUnavailable(
                f"Node.js could not be started at {node} ({exc.strerror}): install it "
                "(apt-get install nodejs) or point REFPOOL_NODE at it"
            ) from None

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)

    def ask(self, source: str) -> dict[str, Any]:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = self._start()
            proc = self._proc
            assert proc.stdin is not None and proc.stdout is not None
            self._next_id += 1
            ident = self._next_id
            answer: list[str] = []
            try:
                proc.stdin.write(json.dumps({"id": ident, "source": source}) + "\n")
                proc.stdin.flush()
            except OSError as exc:
                self.stop()
                raise StaticPassUnavailable(f"the static pass worker died: {exc}") from None
            stdout = proc.stdout
            reader = threading.Thread(target=lambda: answer.append(stdout.readline()))
            reader.daemon = True
            reader.start()
            reader.join(DEADLINE_S)
            if reader.is_alive() or not answer or not answer[0]:
                self.stop()  # a stuck or dead worker is replaced on the next call
                if reader.is_alive():
                    raise StaticPassTimeout(f"the static pass took over {DEADLINE_S:g} s")
                raise StaticPassUnavailable("the static pass worker exited")
            data = json.loads(answer[0])
            if data.get("id") != ident or "failure" in data:
                self.stop()
                raise StaticPassUnavailable(f"static pass worker: {data.get('failure')}")
            return data


_WORKER = _Worker()


def js_facts(source: str) -> dict[str, Any] | ParseError:
    """The AST facts of `source` (see static_pass.js), or where it fails to parse."""
    data = _WORKER.ask(source)
    if "parseError" in data:
        err = data["parseError"]
        return ParseError(err["message"], err.get("line"), err.get("column"), bool(err["atEnd"]))
    facts: dict[str, Any] = data["facts"]
    return facts
