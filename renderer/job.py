"""What one job hands the harness page: the wrapped sketch and its run spec."""

from __future__ import annotations

from typing import Any

from renderer.profiles import CODES, P5_HELPERS, P5_PRIMITIVES, PAINTING_CALLS, SHADOWED, Profile

PREFIX_LINES = 2  # lines job_script puts before the sketch; the page maps error lines back


def job_script(
    source: str, shadowed: list[tuple[str, str]] | tuple[tuple[str, str], ...] = SHADOWED
) -> bytes:
    """Wrap a sketch in a strict factory whose parameters shadow forbidden globals.

    The sketch's own block keeps its top-level let/const from colliding with the last job's,
    and the harness learns setup/draw from the return value, not from window.
    """
    params = ", ".join(["brush", *(name for name, _ in shadowed)])
    head = f'__refpoolDefine(function ({params}) {{ "use strict";\n{{\n'
    tail = (
        '\n;return { setup: typeof setup === "function" ? setup : undefined,'
        ' draw: typeof draw === "function" ? draw : undefined };\n}});\n'
    )
    assert head.count("\n") == PREFIX_LINES
    return (head + source + tail).encode("utf-8")


def job_spec(
    source: str,
    seed: int,
    *,
    script_url: str,
    shadow_count: int,
    profile: Profile,
    size: tuple[int, int],
    max_frames: int,
) -> dict[str, Any]:
    """The argument of the page's run(spec): where the script is and the rules it runs under."""
    width, height = size
    return {
        "seed": seed & 0x7FFFFFFF,
        "source": source,  # parsed on its own first, so it cannot close our wrapper
        "shadowCount": shadow_count,
        "scriptUrl": script_url,
        "prefixLines": PREFIX_LINES,
        "config": {
            "width": width,
            "height": height,
            "maxFrames": max_frames,
            "helpers": {name: True for name in P5_HELPERS},
            "primitives": {name: True for name in P5_PRIMITIVES},
            "brushMethods": list(profile.brush_methods),
            "paintingCalls": {name: True for name in PAINTING_CALLS},
            "codes": CODES,
        },
    }
