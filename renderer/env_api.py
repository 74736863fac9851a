"""The watercolour env's renderer interface, on refpool's renderer (in-process or over HTTP).

The env (HuggingEnvs `02-watercolour/`, `core/render.py`) calls `await renderer.render(sketch,
seed)` and reads a Render with `png`, `paint_fraction`, `finished`, `errors`, `elapsed_ms`;
its gate zeroes a painting under 0.005 paint and treats `RenderError` as "the browser failed,
not the sketch" (retried, never charged). Here, with the same meanings:

- `paint_fraction` is the env's rule: the share of pixels more than 32 (RGB distance) from the
  background, the background being the most common colour at 4 bits a channel, averaged over
  its pixels, everything composited over white. refpool's gate measures coverage by that very
  rule (`renderer.gate.paint_mask`), so it is computed once, by that function.
- the gate profile is `env` by default: what the env's own gate accepts (its 47 p5.brush
  names, its rules), so an env switched to this renderer scores what its gate would. Pass
  `profile="reference"` for the prompt's stricter 10-method allowlist.
- a sketch refpool's gate refuses (a p5 primitive, text, a forbidden API, a timeout, a throw)
  comes back with `paint_fraction` 0.0, `finished` False and its violations in `errors`, so the
  env's own floor scores it zero; `accepted` and `violations` carry refpool's verdict.
- our own failure (`Render.infra_error`) raises `RenderError`, as the env's does when the
  browser lost the page, so the env retries it and never charges the sketch.
- `elapsed_ms` is the time on a renderer page (the env's clock starts once a browser is free).
"""

from __future__ import annotations

import asyncio
import io
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np
from PIL import Image

from refpool.core.contracts import Render
from refpool.core.defaults import ENV_GATE_PROFILE
from refpool.core.errors import RefpoolInfraError
from renderer.gate import paint_mask

STOPPED_EARLY = ("runtime_error", "timeout", "crash")  # the sketch never reached its end


class RenderError(RefpoolInfraError):
    """The renderer could not paint this sketch for reasons of its own (not the sketch's)."""


@dataclass(frozen=True)
class EnvRender:
    """The env's Render, plus refpool's gate verdict."""

    png: bytes
    paint_fraction: float
    finished: bool
    errors: list[str]
    elapsed_ms: int
    accepted: bool = True
    violations: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view, without the image bytes (as the env's)."""
        data = asdict(self)
        data.pop("png")
        return data


def paint_fraction(png: bytes) -> float:
    """The env's paint fraction of a PNG (see the module docstring for the rule)."""
    image = Image.open(io.BytesIO(png)).convert("RGBA")
    white = Image.new("RGBA", image.size, (255, 255, 255, 255))
    rgb = np.asarray(Image.alpha_composite(white, image).convert("RGB"))
    return float(paint_mask(rgb)[0].mean())


def blank_png(width: int, height: int) -> bytes:
    """White paper: what a refused sketch hands the env in place of a painting."""
    out = io.BytesIO()
    Image.new("RGB", (max(width, 1), max(height, 1)), (255, 255, 255)).save(out, "PNG")
    return out.getvalue()


def env_render_of(result: Render) -> EnvRender:
    """A refpool Render in the env's terms. Raises RenderError for our own failures."""
    if result.infra_error:
        raise RenderError(f"the renderer failed (not the sketch): {result.infra_error}")
    violations = [v.to_dict() for v in result.gate.violations]
    elapsed_ms = int(round(result.render_ms))
    if result.accepted and result.png:
        return EnvRender(result.png, paint_fraction(result.png), True, [], elapsed_ms)
    errors = [
        f"{v.code}: {v.message}" + (f" (line {v.line})" if v.line else "")
        for v in result.gate.violations
    ]
    finished = not any(v.code in STOPPED_EARLY for v in result.gate.violations)
    return EnvRender(
        png=blank_png(result.width or 600, result.height or 600),
        paint_fraction=0.0,
        finished=finished and bool(result.png),
        errors=errors,
        elapsed_ms=elapsed_ms,
        accepted=False,
        violations=violations,
    )


class RendersSketches(Protocol):
    async def render(self, source: str, seed: int = 0, profile: Any = None) -> Render: ...


class EnvRenderer:
    """`await EnvRenderer().render(sketch, seed)` -> EnvRender, on a private warm browser.

    Like the env's SketchRenderer, the browser lives on its own event loop thread and starts
    on first use, so the env's `asyncio.run` per step and its async server path share it.
    """

    def __init__(
        self, config: Any = None, *, renderer: Any = None, profile: str = ENV_GATE_PROFILE
    ) -> None:
        """`config`: a RenderConfig for the renderer started on first use; or `renderer`, a
        started SyncRenderer to share (then `close()` leaves it running). `profile`: the gate
        (default `env`, the env's own)."""
        self._config = config
        self.profile = profile
        self._sync: Any = renderer
        self._owned = renderer is None
        self._lock = threading.Lock()

    def _renderer(self) -> Any:
        with self._lock:
            if self._sync is None:
                from renderer import SyncRenderer

                self._sync = SyncRenderer(self._config).start()
            return self._sync

    async def render(self, sketch: str, seed: int = 0) -> EnvRender:
        profile = self.profile
        result = await asyncio.to_thread(lambda: self._renderer().render(sketch, seed, profile))
        return env_render_of(result)

    async def close(self) -> None:
        with self._lock:
            sync, self._sync = self._sync, None
        if sync is not None and self._owned:
            await asyncio.to_thread(sync.close)


class RemoteEnvRenderer:
    """The same interface over HTTP: `RemoteEnvRenderer("http://host:8765")`."""

    def __init__(self, url: str, *, profile: str = ENV_GATE_PROFILE, **client_options: Any) -> None:
        from renderer.client import RenderClient

        self.client = RenderClient(url, **client_options)
        self.profile = profile

    async def render(self, sketch: str, seed: int = 0) -> EnvRender:
        return env_render_of(await self.client.render(sketch, seed=seed, profile=self.profile))

    async def close(self) -> None:
        await self.client.close()
