"""The renderer's wire format: what `refpool serve-renderer` accepts and answers.

    POST /render   JSON {"source": "...", "seed": 0, "profile": "reference"}
                   (or the raw program as text/javascript, with ?seed=&profile=)
                   -> 200 RenderReply: accepted, violations, coverage, render_ms, queued_ms,
                      infra_error, cache_key, lib_versions, png_base64, ...
                   With `Accept: image/png`: the PNG itself, the reply (without the PNG) as
                   JSON in `X-Refpool-Result`.

A sketch's rejection is a 200 with accepted=false; our own failure is a 503 with infra_error,
so a client can retry instead of scoring it. The server (renderer/service.py) and the client
(renderer/client.py) both convert through this module, so the two ends cannot drift.
"""

from __future__ import annotations

import base64
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator

from refpool.core.contracts import GateResult, Render, Violation
from refpool.core.defaults import GATE_PROFILE
from renderer.profiles import get_profile

MAX_SOURCE_CHARS = 256 * 1024  # a sketch is a few KB; the largest honest ones are ~20 KB
MAX_BODY_BYTES = 4 * MAX_SOURCE_CHARS + 4096  # UTF-8 and JSON escapes, checked before reading
SEED_MAX = 2**32 - 1  # the env treats a seed as an unsigned 32-bit integer (`seed >>> 0`)


class RenderRequest(BaseModel):
    """One render. Strict types: `{"source": 5}` is a 422 naming `source`, never a crash."""

    model_config = ConfigDict(extra="forbid")

    source: StrictStr = Field(min_length=1, max_length=MAX_SOURCE_CHARS)
    seed: StrictInt = Field(default=0, ge=0, le=SEED_MAX)
    profile: StrictStr | None = None

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str | None) -> str | None:
        if value is not None:
            get_profile(value)  # raises ValueError naming the profiles that exist
        return value


class ViolationModel(BaseModel):
    code: str
    message: str
    line: int | None = None


class RenderReply(BaseModel):
    """A Render on the wire (the PNG as base64)."""

    accepted: bool
    violations: list[ViolationModel]
    coverage: float | None
    render_ms: float  # time on a renderer slot
    queued_ms: float  # time waiting for a free slot
    infra_error: str | None
    cache_key: str
    program_sha: str
    seed: int
    width: int
    height: int
    profile: str
    lib_versions: dict[str, str]
    cached: bool
    console: list[str]
    png_base64: str | None = None


# Render fields that cross the wire as they are, both ways; the gate's are flattened into the
# reply, the PNG goes as base64 and the timings are rounded to 0.1 ms on the way out.
_AS_IS = (
    "program_sha",
    "seed",
    "width",
    "height",
    "infra_error",
    "cache_key",
    "lib_versions",
    "cached",
    "console",
    "render_ms",
    "queued_ms",
)
_ROUNDED = ("render_ms", "queued_ms")


def reply_of(result: Render, include_png: bool = True) -> RenderReply:
    fields: dict[str, Any] = {name: getattr(result, name) for name in _AS_IS}
    fields |= {name: round(fields[name], 1) for name in _ROUNDED}
    png = base64.b64encode(result.png).decode() if (include_png and result.png) else None
    return RenderReply(
        **fields,
        accepted=result.accepted,
        violations=[ViolationModel(**v.to_dict()) for v in result.gate.violations],
        coverage=result.gate.coverage,
        profile=result.gate.profile,
        png_base64=png,
    )


def render_of(data: dict[str, Any]) -> Render:
    """The Render record a reply describes (what the client hands its caller)."""
    reply = RenderReply.model_validate(data)
    gate = GateResult(
        accepted=reply.accepted,
        violations=[Violation(v.code, v.message, v.line) for v in reply.violations],
        coverage=reply.coverage,
        profile=reply.profile or GATE_PROFILE,
    )
    return Render(
        **{name: getattr(reply, name) for name in _AS_IS},
        gate=gate,
        png=base64.b64decode(reply.png_base64) if reply.png_base64 else None,
    )


def infra_render(source: str, seed: int, profile: str | None, message: str) -> Render:
    """A Render for a job our machinery lost (a replica died twice): never the sketch's fault."""
    from renderer.cache import program_sha

    return Render(
        program_sha=program_sha(source),
        seed=seed,
        width=0,
        height=0,
        gate=GateResult(accepted=False, profile=profile or GATE_PROFILE),
        infra_error=message,
    )
