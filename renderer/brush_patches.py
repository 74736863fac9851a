"""p5.brush as the painting page loads it: the pinned library with two exact rewrites, and
(on software 2D canvases, refpool's default) its fill masks drawn as the env's GPU draws them.

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

3. Masks as the GPU rounds them (`gpu_like_masks`, not for `env_pixels`): float16 masks,
   one-level layers added where they cover half a pixel, and the texture's erasing discs
   rounded per disc. `tests/test_real_corpus.py` holds the faint washes to the env's figures.
"""

from __future__ import annotations

import re
from pathlib import Path

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
MASK_CANVAS = '"undefined"!=typeof OffscreenCanvas?new OffscreenCanvas(t,e):'
PAGE_MASK_CANVAS = '"undefined"!=typeof OffscreenCanvas&&r?new OffscreenCanvas(t,e):'


def float_fill_masks(library: str) -> str:
    """p5.brush's fill and wash masks kept at half-float precision, on the page's canvases.

    A fill is 20 layers of translucent polygons on a 2D mask canvas. The env's Chromium
    rasterises that canvas on SwiftShader, which blends in float and rounds once per layer;
    Skia's software raster blends in 8 bits and truncates, so a faint layer (alpha of one or
    two 255ths) stops adding pigment after the first: stacked faint washes lost most of it
    and were judged blank. A float16 mask accumulates as the GPU does at software speed. The
    mask is a page canvas rather than an OffscreenCanvas (the same pixels, the same speed), so
    its one-level layers can be drawn through an SVG filter (`gpu_like_fill_layers`).
    """
    _once(library, MASK_CONTEXT, "mask canvas")
    _once(library, MASK_CANVAS, "mask canvas")
    library = library.replace(MASK_CANVAS, PAGE_MASK_CANVAS)
    return library.replace(MASK_CONTEXT, FLOAT_MASK_CONTEXT)


LAYER_PAINT = "bt.ctx.fill(),bt.ctx.stroke()}"
LAYER_START = "layer(t,e,r,n=null){bt.ctx.lineWidth=T(t,0,24,e/25,e/30,!0)*pt.fill.border_strength,"
# Each draw names its alpha in 255ths (a colour's alpha is stored in 8 bits): `r` percent for
# the layer, `border_strength` hundredths for its edge.
LAYER_BY_LEVEL = (
    'refpoolLayerDraw(bt.ctx,"fill",Math.round(2.55*r)),'
    'refpoolLayerDraw(bt.ctx,"stroke",Math.round(2.55*pt.fill.border_strength))}'
)
PATH_RECT = "bt.markDirtyRect(bt.mask,{minX:l-x,minY:h-x,maxX:u+x,maxY:f+x})}function qr("
KEPT_PATH_RECT = (
    "bt.markDirtyRect(bt.mask,refpoolPathRect={minX:l-x,minY:h-x,maxX:u+x,maxY:f+x})}function qr("
)


def gpu_like_fill_layers(library: str) -> str:
    """Each fill layer and its edge added to the mask as the env's GPU adds them.

    The env's SwiftShader canvas rounds every draw to the nearest level. A layer whose alpha
    is one level (most of a light wash) so adds a whole level to each pixel it covers at least
    half of, and nothing to the rest, where an exact blend adds its coverage. Those draws go
    through `refpoolLayerDraw` (renderer/gpu_mask.js): opaque, through a filter that maps
    coverage to one level or none, added, and clipped to the rectangle p5.brush marks for the
    path (the filter's cost). Stronger layers lose at most half a level per draw to rounding
    either way, and are blended as before.
    """
    start = library.find(LAYER_START)
    if start < 0 or library.count(LAYER_START) != 1:
        raise ShaderPatchError(
            f"p5.brush's fill layer is not the one renderer/brush_patches.py rewrites{REINSTALL}"
        )
    _once(library, PATH_RECT, "mask path bounds")
    end = library.index(LAYER_PAINT, start)
    library = library[:end] + LAYER_BY_LEVEL + library[end + len(LAYER_PAINT) :]
    return library.replace(PATH_RECT, KEPT_PATH_RECT)


ERASE = (
    "erase(t,e){bt.ctx.save();const r=~~(w(80,110)*T(t,0,1,2,3.5)),n=this.sizeX/1.3,"
    "i=this.sizeY/1.3,o=1.3*Math.min(this.sizeX,this.sizeY),s=.03*o,a=.45*o,{x:c,y:l}=this.midP;"
    'bt.ctx.globalCompositeOperation="destination-out";const h=(5-T(e,80,100,.3,.7,!0))*t/255;'
    "bt.ctx.fillStyle=`rgb(255 0 0 / ${h})`,bt.ctx.lineWidth=0;for(let t=0;t<r;t++){"
    "const e=c+P(0,n),r=l+P(0,i),o=w(s,a);bt.ctx.beginPath(),qr(e,r,o),t%5!=0&&bt.ctx.fill()}"
    'bt.ctx.globalCompositeOperation="source-over",bt.ctx.restore()}'
)
# The same random draws in the same order; the discs it would fill go to `refpoolGpuErase`.
GPU_ERASE = (
    "erase(t,e){const r=~~(w(80,110)*T(t,0,1,2,3.5)),n=this.sizeX/1.3,"
    "i=this.sizeY/1.3,o=1.3*Math.min(this.sizeX,this.sizeY),s=.03*o,a=.45*o,{x:c,y:l}=this.midP;"
    "const h=(5-T(e,80,100,.3,.7,!0))*t/255,d=[];for(let t=0;t<r;t++){"
    "const e=c+P(0,n),r=l+P(0,i),o=w(s,a);t%5!=0&&d.push(e,r,o/2)}refpoolGpuErase(bt.ctx,d,h)}"
)


def gpu_rounded_erase(library: str) -> str:
    """The wash texture's erasing discs applied with the env's GPU rounding.

    A fill's texture is 4 passes of ~80 "destination-out" discs of alpha ~1/20. Rounded to the
    nearest level after each disc, as on the env's GPU, a disc leaves every pixel under about
    ten levels as it was, so a faint wash keeps its pigment; on a float16 mask each disc took
    its share of every pixel, and a wash at the 0.005 floor was eroded to blank.
    """
    _once(library, ERASE, "fill texture's erase")
    return library.replace(ERASE, GPU_ERASE)


def gpu_like_masks(library: str) -> str:
    """Every mask rewrite for software 2D canvases, with the page functions they call."""
    script = (Path(__file__).parent / "gpu_mask.js").read_text(encoding="utf-8")
    return script + "\n" + gpu_rounded_erase(gpu_like_fill_layers(float_fill_masks(library)))


def served_brush(library: str, *, env_pixels: bool = False) -> str:
    """What the painting page loads: deterministic, with the exact speed-up (and, with
    software 2D canvases, masks that keep the env's pigment)."""
    patched = leaner_pigment_mix(deterministic_brush(library))
    return patched if env_pixels else gpu_like_masks(patched)
