"""renderer.http_api: one mapping between a Render and its reply on the wire, both ways."""

from __future__ import annotations

import dataclasses
import json

from refpool.core.contracts import GateResult, Render, Violation
from renderer.http_api import RenderReply, render_of, reply_of


def a_render(**changes: object) -> Render:
    """A Render with every field away from its default."""
    render = Render(
        program_sha="ab" * 32,
        seed=7,
        width=600,
        height=600,
        gate=GateResult(
            accepted=True,
            violations=[Violation("slow_frame", "a frame took 90 ms", 12)],
            coverage=0.42,
            profile="reference",
        ),
        png=b"\x89PNG not really",
        render_ms=123.4,
        console=["hello", "world"],
        infra_error=None,
        cache_key="k" * 16,
        lib_versions={"p5": "1.9.4", "p5.brush": "1.1.4"},
        cached=True,
        queued_ms=5.6,
    )
    return dataclasses.replace(render, **changes)


def test_a_render_crosses_the_wire_and_back_unchanged():
    render = a_render()
    wire = json.loads(reply_of(render).model_dump_json())
    assert render_of(wire) == render


def test_the_reply_without_the_png_and_with_rounded_timings():
    reply = reply_of(a_render(render_ms=123.456, queued_ms=0.04), include_png=False)
    assert reply.png_base64 is None and (reply.render_ms, reply.queued_ms) == (123.5, 0.0)
    assert render_of(reply.model_dump()).png is None


def test_an_infra_failure_is_never_accepted_on_either_end():
    render = a_render(infra_error="the browser died twice", gate=GateResult(accepted=False))
    reply = reply_of(render)
    assert not reply.accepted and reply.infra_error == "the browser died twice"
    assert render_of(reply.model_dump()) == render


def test_every_field_of_either_side_is_carried():
    # a field added to Render or to the reply and not mapped would come back as a default
    reply_fields = set(RenderReply.model_fields)
    derived = {"accepted", "violations", "coverage", "profile", "png_base64"}
    plain = {f.name for f in dataclasses.fields(Render)} - {"gate", "png"}
    assert reply_fields == plain | derived
