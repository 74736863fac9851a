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


MASK_CONTEXT = 'getContext("2d",r?{willReadFrequently:!0}:void 0)'
FLOAT_MASK_CONTEXT = 'getContext("2d",r?{willReadFrequently:!0}:{colorType:"float16"})'


def float_fill_masks(library: str) -> str:
    """p5.brush's fill and wash masks kept at half-float precision, as the env's GPU keeps them.

    A fill is 20 layers of translucent polygons on a 2D mask canvas. The env's Chromium
    rasterises that canvas on SwiftShader, which blends in float and rounds once per layer;
    Skia's software raster blends in 8 bits and truncates, so a faint layer (alpha of one or
    two 255ths) stops adding pigment after the first: stacked faint washes lost most of it
    and were judged blank. A float16 mask accumulates as the GPU does (within a few levels)
    at software speed. Only for software 2D canvases (not `env_pixels`).
    """
    _once(library, MASK_CONTEXT, "mask canvas")
    return library.replace(MASK_CONTEXT, FLOAT_MASK_CONTEXT)


LAYER_PAINT = "bt.ctx.fill(),bt.ctx.stroke()}"
LAYER_START = "layer(t,e,r,n=null){bt.ctx.lineWidth=T(t,0,24,e/25,e/30,!0)*pt.fill.border_strength,"
# A layer whose alpha is one 255th: on the GPU it adds that 255th to every pixel it covers
# (the loss, under half a level, rounds away) until a pixel holds 128, so it is drawn additive.
LAYER_ADDITIVE = (
    'bt.ctx.globalCompositeOperation=Math.round(2.55*r)===1?"lighter":"source-over",bt.ctx.fill(),'
    'bt.ctx.globalCompositeOperation=Math.round(2.55*pt.fill.border_strength)===1?"lighter":"source-over",'
    'bt.ctx.stroke(),bt.ctx.globalCompositeOperation="source-over"}'
)


def gpu_like_fill_layers(library: str) -> str:
    """Each fill layer blended as the env's GPU blends it, on a float16 mask.

    The env's SwiftShader canvas rounds after every layer, so a layer of alpha 1/255 adds a
    whole level each time (the 8-bit loss of d/255 rounds to nothing while d < 128), where an
    exact blend adds 1 - d/255 of a level. The faintest layers (most of a light wash) are drawn
    with "lighter" (adding their alpha): the GPU's result for them. Stronger layers lose at
    most half a level per layer to rounding either way, and are blended as before.
    """
    start = library.find(LAYER_START)
    if start < 0 or library.count(LAYER_START) != 1:
        raise ShaderPatchError(
            f"p5.brush's fill layer is not the one renderer/brush_patches.py rewrites{REINSTALL}"
        )
    end = library.index(LAYER_PAINT, start)
    return library[:end] + LAYER_ADDITIVE + library[end + len(LAYER_PAINT) :]


def served_brush(library: str, *, env_pixels: bool = False) -> str:
    """What the painting page loads: deterministic, with the exact speed-up (and, with
    software 2D canvases, masks that keep the env's pigment)."""
    patched = leaner_pigment_mix(deterministic_brush(library))
    return patched if env_pixels else gpu_like_fill_layers(float_fill_masks(patched))
