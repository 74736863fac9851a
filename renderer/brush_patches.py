"""p5.brush as the painting page loads it: the pinned library with two exact rewrites.

1. Deterministic fill edges. The fill shader returns early for pixels outside the mask and
   then, for the pixels left, takes screen-space derivatives (`dFdx`/`dFdy`) of the mask's
   alpha. Derivatives are computed across a 2x2 quad of pixels, and GLSL ES 3.00 leaves them
   undefined once part of the quad has returned. On SwiftShader the pixels on a mask's edge
   then read whatever the rasteriser's worker thread last left in those lanes, so one program
   and seed painted 10-30 different edge pixels per run. The patch computes the edge blur
   (the only derivative use) before the early return, so every pixel of every quad takes
   part; pixels whose value was defined before paint exactly as before.
2. Less work per shaded pixel, the same arithmetic. The pigment mix is the render's largest
   cost on SwiftShader (about 40% of a coral render's CPU). It took each colour's luminance
   as the Y of a whole XYZ sum and threw X and Z away, and recomputed two loop-invariant
   concentrations 38 times per pixel. The rewrite sums only Y, term by term in the same
   order, and computes the concentrations once: every float operation whose result is used
   is the same operation on the same operands, so the pixels are bit-identical.

Each rewrite matches the text of the pinned p5.brush exactly and refuses to guess at any
other; `tests/test_render_surroundings.py` renders with and without 2 and compares PNG
bytes. (Uploading the fill mask from `getImageData` instead of a fresh staging canvas was
measured too: the same bytes, no faster, so it is not here.)
"""

from __future__ import annotations

import re

from refpool.core.errors import RefpoolInfraError

EARLY_RETURN = "if(maskColor.a==0.0){outColor=source;return;}"
BLUR_START = "vec2 texelSize=1.0/vec2(textureSize(u_mask,0));"
BLUR_END = "blurEdge/=9.0;"
BLUR_DECLARED = "float blurEdge=0.0;"

XYZ_FUNCTION = "vec3 spectral_reflectance_to_xyz(float R[SPECTRAL_SIZE]){"
XYZ_TERM = re.compile(r"xyz\+=R\[(\d+)\]\*vec3\(([-\d.]+),([-\d.]+),([-\d.]+)\);")
CONCENTRATIONS = (
    "float concentration1=pow(factor1,2.)*pow(tintingStrength1,2.)*luminance1;"
    "float concentration2=pow(factor2,2.)*pow(tintingStrength2,2.)*luminance2;"
    "float totalConcentration=concentration1+concentration2;"
)
MIX_LOOP = "for(int i=0;i<SPECTRAL_SIZE;i++){"

REINSTALL = ": reinstall the pinned version with `npm ci`"


class ShaderPatchError(RefpoolInfraError, RuntimeError):
    """The installed p5.brush is not the one these rewrites were written for."""


def _once(library: str, text: str, what: str) -> None:
    if library.count(text) != 1:
        raise ShaderPatchError(
            f"p5.brush's {what} is not the one renderer/brush_patches.py rewrites"
            f" (a different p5.brush version?){REINSTALL}"
        )


def deterministic_brush(library: str) -> str:
    """p5.brush's source with the fill shader's derivatives taken by every pixel."""
    _once(library, EARLY_RETURN, "fill shader")
    _once(library, "dFdx", "fill shader")
    head, tail = library.split(EARLY_RETURN)
    start, end = tail.find(BLUR_START), tail.find(BLUR_END)
    if start < 0 or end < start or BLUR_DECLARED not in tail[start:end]:
        raise ShaderPatchError(
            f"p5.brush's fill shader has no edge blur where renderer/brush_patches.py expects"
            f" it{REINSTALL}"
        )
    blur = tail[start : end + len(BLUR_END)]
    hoisted = BLUR_DECLARED + "if(!u_isBrush){" + blur.replace(BLUR_DECLARED, "") + "}"
    return head + hoisted + EARLY_RETURN + tail[:start] + tail[end + len(BLUR_END) :]


def leaner_pigment_mix(library: str) -> str:
    """The pigment mix summing only the Y it uses, its concentrations taken once per pixel."""
    _once(library, XYZ_FUNCTION, "spectral XYZ sum")
    start = library.index(XYZ_FUNCTION)
    end = library.index("return xyz;}", start) + len("return xyz;}")
    terms = XYZ_TERM.findall(library[start:end])
    if [int(k) for k, *_ in terms] != list(range(38)):
        raise ShaderPatchError(f"p5.brush's spectral XYZ sum is not 38 terms in order{REINSTALL}")
    # y starts at 0. and adds R[k]*Y[k] in order: the Y lane of the vec3 sum, term by term.
    y_only = (
        "float spectral_reflectance_to_y(float R[SPECTRAL_SIZE]){float y=0.;"
        + "".join(f"y+=R[{k}]*{y};" for k, _x, y, _z in terms)
        + "return y;}"
    )
    library = library[:end] + y_only + library[end:]
    for n in "12":
        luminance = f"float luminance{n}=spectral_reflectance_to_xyz(R{n})[1];"
        _once(library, luminance, "luminance")
        library = library.replace(luminance, f"float luminance{n}=spectral_reflectance_to_y(R{n});")
    _once(library, MIX_LOOP + CONCENTRATIONS, "mixing loop")
    return library.replace(MIX_LOOP + CONCENTRATIONS, CONCENTRATIONS + MIX_LOOP)


def served_brush(library: str) -> str:
    """What the painting page loads: deterministic, with the exact speed-up."""
    return leaner_pigment_mix(deterministic_brush(library))
