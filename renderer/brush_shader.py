"""p5.brush's fill blend shader, made deterministic before the painting page loads it.

The shader returns early for pixels outside the fill mask and then, for the pixels left, takes
screen-space derivatives (`dFdx`/`dFdy`) of the mask's alpha. Derivatives are computed across a
2x2 quad of pixels, and GLSL ES 3.00 leaves them undefined once part of the quad has returned.
On SwiftShader the pixels on a mask's edge then read whatever the rasteriser's worker thread
last left in those lanes, so one program and seed painted 10-30 different edge pixels per run.

The patch computes the edge blur (the only derivative use) before the early return, so every
pixel of every quad takes part; pixels whose value was defined before paint exactly as before.
It matches the shader text of the pinned p5.brush exactly and refuses to guess at any other.
"""

from __future__ import annotations

from refpool.core.errors import RefpoolInfraError

EARLY_RETURN = "if(maskColor.a==0.0){outColor=source;return;}"
BLUR_START = "vec2 texelSize=1.0/vec2(textureSize(u_mask,0));"
BLUR_END = "blurEdge/=9.0;"
BLUR_DECLARED = "float blurEdge=0.0;"


class ShaderPatchError(RefpoolInfraError, RuntimeError):
    """The installed p5.brush's fill shader is not the one this patch was written for."""


def deterministic_brush(library: str) -> str:
    """p5.brush's source with the fill shader's derivatives taken by every pixel."""
    if library.count(EARLY_RETURN) != 1 or library.count("dFdx") != 1:
        raise ShaderPatchError(
            "p5.brush's fill shader is not the one renderer/brush_shader.py patches (a different"
            " p5.brush version?): reinstall the pinned version with `npm ci`"
        )
    head, tail = library.split(EARLY_RETURN)
    start, end = tail.find(BLUR_START), tail.find(BLUR_END)
    if start < 0 or end < start or BLUR_DECLARED not in tail[start:end]:
        raise ShaderPatchError(
            "p5.brush's fill shader has no edge blur where renderer/brush_shader.py expects it:"
            " reinstall the pinned version with `npm ci`"
        )
    blur = tail[start : end + len(BLUR_END)]
    hoisted = BLUR_DECLARED + "if(!u_isBrush){" + blur.replace(BLUR_DECLARED, "") + "}"
    return head + hoisted + EARLY_RETURN + tail[:start] + tail[end + len(BLUR_END) :]
