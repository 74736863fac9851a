"""The on-disk render cache: a verdict as JSON (and its PNG) per cache key.

Entries live in `<cache_dir>/<key[:2]>/<key>.json|.png`. The key covers everything that
decides the image and the verdict: program, seed, canvas size, the p5 and p5.brush versions,
gate profile, harness and frame budget. Chromium's version is left out, so a browser upgrade
keeps the cache. Any change to the key's inputs would invalidate every user's cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from refpool.core.contracts import Render
from renderer.libserver import HERE

# Everything that decides a verdict: the page's rules, the static pass and the verdict.
_GATE_FILES = ("harness.js", "static_pass.js", "gate.py", "profiles.py", "verdict.py")
HARNESS_VERSION = hashlib.sha256(
    b"".join((HERE / name).read_bytes() for name in _GATE_FILES)
).hexdigest()[:12]


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
            return Render.from_dict({**data, "png": png})
        except (OSError, ValueError, TypeError):
            return None  # a damaged cache entry is simply re-rendered

    def put(self, result: Render) -> None:
        """Keep a render under its own cache key (never our failures: they say nothing)."""
        paths = self._paths(result.cache_key)
        if not paths or result.infra_error:
            return
        paths[0].parent.mkdir(parents=True, exist_ok=True)
        if result.png:
            _write_atomically(paths[1], result.png)
        _write_atomically(paths[0], json.dumps(result.to_dict()).encode())


def _write_atomically(path: Path, data: bytes) -> None:
    """Write beside, then rename: a reader never sees half an entry."""
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
