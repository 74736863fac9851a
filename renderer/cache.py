"""The on-disk render cache: a verdict as JSON (and its PNG) per cache key.

Entries live in `<cache_dir>/<key[:2]>/<key>.json|.png`. The key covers everything that
decides the image and the verdict: program, seed, canvas size, the p5 and p5.brush versions,
gate profile, deadline, frame budget, and the renderer's own code (every page/worker script
and the Python that judges). Chromium's version is left out, so a browser upgrade keeps the
cache.

Only verdicts about the program are kept. A timeout or a crash may come from load (a busy
machine, a neighbour's GPU work) rather than from the sketch, and an infrastructure failure
is ours: replaying one would give an honest program a permanent failure, so none is cached.

One program and seed give the same PNG bytes (renderer/brush_patches.py makes p5.brush's fill
shader deterministic), but entries are keyed by program + seed + versions, which is known
before rendering.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from refpool.core.contracts import Render
from refpool.core.text import repair_data
from renderer.libserver import HERE

# Everything that decides a verdict: every script the page, its workers and the static pass
# run (whatever their names), the page itself and the browser's flags (libserver, browser),
# and the Python that builds the job and judges its answer.
_GATE_PY = (
    "brush_patches.py",
    "gate.py",
    "env_rules.py",
    "profiles.py",
    "verdict.py",
    "job.py",
    "jsfacts.py",
    "libserver.py",
    "browser.py",
)
_GATE_FILES = sorted({*(p.name for p in HERE.glob("*.js")), *_GATE_PY})
HARNESS_VERSION = hashlib.sha256(
    b"".join(name.encode() + b"\0" + (HERE / name).read_bytes() for name in _GATE_FILES)
).hexdigest()[:12]

# Verdicts that may come from load rather than from the sketch: never kept, never replayed.
LOAD_DEPENDENT_CODES = frozenset({"timeout", "crash"})


def cacheable(result: Render) -> bool:
    """A verdict about the program alone: not our failure, not a timeout or a crash."""
    if result.infra_error:
        return False
    return not any(v.code in LOAD_DEPENDENT_CODES for v in result.gate.violations)


def program_sha(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def cache_key(
    source: str,
    seed: int,
    *,
    size: tuple[int, int],
    lib_versions: dict[str, str],
    profile: str,
    max_frames: int,
    deadline_s: float,
    env_pixels: bool = False,
) -> str:
    """The key of one render; `profile` is the gate profile's name."""
    parts = {
        "program": program_sha(source),
        "seed": seed,
        "size": list(size),
        "libs": {k: v for k, v in lib_versions.items() if k != "chromium"},
        "profile": profile,
        "harness": HARNESS_VERSION,
        "max_frames": max_frames,
        "deadline_s": float(deadline_s),
        "env_pixels": env_pixels,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class RenderCache:
    """Renders by cache key in a folder; with no folder it holds nothing."""

    def __init__(self, folder: Path | str | None) -> None:
        self.folder = Path(folder) if folder else None

    def _paths(self, key: str) -> tuple[Path, Path] | None:
        if self.folder is None:
            return None
        folder = self.folder / key[:2]
        return folder / f"{key}.json", folder / f"{key}.png"

    def get(self, key: str) -> Render | None:
        paths = self._paths(key)
        if not paths or not paths[0].exists():
            return None
        try:
            data = json.loads(paths[0].read_text())
            png = paths[1].read_bytes() if paths[1].exists() else None
            data["cached"] = True
            found = Render.from_dict({**data, "png": png})
        except (OSError, ValueError, TypeError, KeyError):
            return None  # a damaged cache entry is simply re-rendered
        # An entry written before load-dependent verdicts were refused is not replayed.
        return found if cacheable(found) else None

    def put(self, result: Render) -> None:
        """Keep a render under its own cache key, if its verdict is about the program alone."""
        paths = self._paths(result.cache_key)
        if not paths or not cacheable(result):
            return
        paths[0].parent.mkdir(parents=True, exist_ok=True)
        if result.png:
            _write_atomically(paths[1], result.png)
        _write_atomically(paths[0], json.dumps(repair_data(result.to_dict())).encode())


def _write_atomically(path: Path, data: bytes) -> None:
    """Write beside, then rename: a reader never sees half an entry."""
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
