"""Gate assembly: from what the harness page reported to a GateResult and a Render.

The page answers each job with a JSON string {status, detail, violations, paints, frames,
canvas, console, png}. "done", "error" and "timeout" (the page stopped the sketch's worker)
are about the sketch; "infra" means our harness failed before any sketch code ran, and the
job is retried rather than judged. An answer that does not parse means the sketch broke the
page. A sketch that hangs or crashes its page gets no answer at all: the renderer raises
SketchFault for it.
"""

from __future__ import annotations

import base64
import io
import json
import time
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from refpool.core.contracts import GateResult, Render, Violation
from refpool.core.text import repair_text
from renderer.gate import measure_coverage
from renderer.profiles import CODES, Profile


@dataclass(frozen=True)
class PageOutcome:
    """One job's answer from the page, with the screenshot and console taken after it."""

    status: str  # "done", "error" or "infra"
    violations: list[Violation] = field(default_factory=list)
    canvas: bool = False  # the sketch made its WEBGL canvas
    paints: int = 0  # brush calls that put paint down
    detail: str | None = None
    png: bytes | None = None
    console: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """Finished without a violation: the canvas is worth a screenshot."""
        return self.status == "done" and not self.violations


def parse_outcome(raw: Any, size: tuple[int, int] = (600, 600)) -> PageOutcome:
    """The page's answer; anything but a well-formed one means the sketch broke the page."""
    try:
        data = json.loads(raw)
        if isinstance(data, dict) and data.get("status") in ("done", "error", "infra", "timeout"):
            violations = [
                Violation(str(v["code"]), repair_text(str(v["message"])), v.get("line"))
                for v in data.get("violations") or []
            ]
            status, png = data["status"], canvas_png(data.get("png"))
            if png is not None and png_size(png) != size:
                # A backstop: the page paints only at this size, so this is never the picture.
                got = "x".join(map(str, png_size(png)))
                message = f"{CODES['canvas_size']} (the picture is {got}, not {size[0]}x{size[1]})"
                violations.append(Violation("canvas_size", message))
                status, png = "error", None
            return PageOutcome(
                status=status,
                violations=violations,
                canvas=bool(data.get("canvas")),
                paints=int(data.get("paints") or 0),
                detail=data.get("detail"),
                png=png,
                console=[repair_text(str(line)) for line in data.get("console") or []][:50],
            )
    except (TypeError, ValueError, OSError, KeyError):
        pass
    return PageOutcome("error", [Violation("tamper", CODES["tamper"])])


def png_size(png: bytes) -> tuple[int, int]:
    width, height = Image.open(io.BytesIO(png)).size
    return width, height


def canvas_png(data_url: Any) -> bytes | None:
    """The canvas's own pixels (a PNG data URL), composited over the page's white paper.

    The page never shows through: CSS cannot change what is judged.
    """
    prefix = "data:image/png;base64,"
    if not isinstance(data_url, str) or not data_url.startswith(prefix):
        return None
    img = Image.open(io.BytesIO(base64.b64decode(data_url[len(prefix) :], validate=True)))
    img.load()
    rgba = img.convert("RGBA")
    paper = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    out = io.BytesIO()
    Image.alpha_composite(paper, rgba).convert("RGB").save(out, "PNG")
    return out.getvalue()


def gate_verdict(outcome: PageOutcome, profile: Profile) -> GateResult:
    """The page's violations, then, for a clean run, the canvas and pixel checks."""
    violations = list(outcome.violations)
    coverage = None
    if outcome.status != "done" and not violations:
        # Accepted means "done": an error that names no violation is still a failure.
        message = f"{CODES['runtime_error']} (the sketch stopped without a recorded reason)"
        violations.append(Violation("runtime_error", message))
    if outcome.clean:
        if not outcome.canvas:
            violations.append(Violation("no_webgl_canvas", CODES["no_webgl_canvas"]))
        elif outcome.paints == 0:
            violations.append(Violation("no_painting", CODES["no_painting"]))
        if outcome.png is None and not violations:
            violations.append(Violation("blank_canvas", CODES["blank_canvas"]))
        if outcome.png is not None:
            coverage = measure_coverage(outcome.png)
            if coverage < profile.min_coverage:
                measured = f"paint coverage {coverage:.4f} < {profile.min_coverage}"
                message = f"{CODES['blank_canvas']} ({measured})"
                violations.append(Violation("blank_canvas", message))
    return GateResult(not violations, violations, coverage, profile.name)


class SketchFault(Exception):
    """The sketch hung or crashed its page (the browser is fine): a verdict, not a retry."""

    def __init__(self, violation: Violation, console: list[str]) -> None:
        super().__init__(violation.message)
        self.violation = violation
        self.console = console

    @classmethod
    def timeout(cls, deadline_s: float, console: list[str]) -> SketchFault:
        return cls(Violation("timeout", f"{CODES['timeout']} (limit {deadline_s:g} s)"), console)

    @classmethod
    def crash(cls, error: str, console: list[str]) -> SketchFault:
        """A page crash; unloading or navigating its own page is a forbidden API instead."""
        if "context was destroyed" in error or "navigat" in error.lower():
            message = "The sketch navigated away from or unloaded its page."
            return cls(Violation("forbidden_api", message), console)
        return cls(Violation("crash", CODES["crash"]), console)


@dataclass
class Timing:
    """Where a render's time went: waiting for a slot, and everything else."""

    started: float = field(default_factory=time.perf_counter)
    queued_s: float = 0.0

    def queued(self, seconds: float) -> None:
        self.queued_s += seconds


@dataclass(frozen=True)
class RenderStamp:
    """What every Render of one job shares, and its timing (render_ms, queued_ms)."""

    program_sha: str
    seed: int
    width: int
    height: int
    cache_key: str
    lib_versions: dict[str, str]
    profile: str  # the gate profile's name, as stored
    timing: Timing = field(default_factory=Timing)

    def finish(
        self,
        gate: GateResult,
        *,
        png: bytes | None = None,
        console: list[str] | None = None,
        infra_error: str | None = None,
    ) -> Render:
        return Render(
            program_sha=self.program_sha,
            seed=self.seed,
            width=self.width,
            height=self.height,
            gate=gate,
            png=png,
            render_ms=(time.perf_counter() - self.timing.started - self.timing.queued_s) * 1000,
            queued_ms=self.timing.queued_s * 1000,
            console=list(console or []),
            infra_error=infra_error,
            cache_key=self.cache_key,
            lib_versions=dict(self.lib_versions),
        )

    def failed(
        self,
        violations: list[Violation],
        *,
        console: list[str] | None = None,
        infra_error: str | None = None,
    ) -> Render:
        """Every failure without a picture: a static rejection, a sketch's timeout or crash
        (a SketchFault), or our own failure (`infra_error`, no violations)."""
        gate = GateResult(False, list(violations), None, self.profile)
        return self.finish(gate, console=console, infra_error=infra_error)
