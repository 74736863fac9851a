// p5.brush's fill masks drawn as the env's GPU draws them, on the float16 mask canvases of
// refpool's software raster (renderer/brush_patches.py rewrites the library to call these).
//
// Erasing. A fill's texture is made by "destination-out" discs of a small alpha (about
// 1/20) on the 8-bit mask. The env's GPU canvas stores each disc's result rounded to the
// nearest level, so a disc leaves any pixel under about ten levels as it was: a faint wash
// keeps its pigment. On a float16 mask every disc takes its share of every pixel, and a faint
// wash was eroded to blank where the env paints it. So the discs are applied here, one by
// one, with the GPU's rounding, over the pixels they cover (an edge pixel by its coverage).
function refpoolGpuErase(ctx, discs, alpha) {
  if (discs.length === 0) return;
  const m = ctx.getTransform();
  const scale = Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
  const width = ctx.canvas.width;
  const height = ctx.canvas.height;
  const device = new Float64Array(discs.length);
  let left = width, top = height, right = 0, bottom = 0;
  for (let k = 0; k < discs.length; k += 3) {
    const x = discs[k], y = discs[k + 1];
    const cx = m.a * x + m.c * y + m.e;
    const cy = m.b * x + m.d * y + m.f;
    const r = discs[k + 2] * scale;
    device[k] = cx;
    device[k + 1] = cy;
    device[k + 2] = r;
    left = Math.min(left, Math.floor(cx - r - 1));
    top = Math.min(top, Math.floor(cy - r - 1));
    right = Math.max(right, Math.ceil(cx + r + 1));
    bottom = Math.max(bottom, Math.ceil(cy + r + 1));
  }
  left = Math.max(0, left);
  top = Math.max(0, top);
  right = Math.min(width, right);
  bottom = Math.min(height, bottom);
  if (right <= left || bottom <= top) return;
  const w = right - left;
  const strength = Math.round(alpha * 255) / 255; // a colour's alpha is stored in 8 bits
  const image = ctx.getImageData(left, top, w, bottom - top);
  const pixels = image.data;
  for (let k = 0; k < device.length; k += 3) {
    const cx = device[k] - left, cy = device[k + 1] - top, r = device[k + 2];
    const y0 = Math.max(0, Math.floor(cy - r - 1)), y1 = Math.min(bottom - top, Math.ceil(cy + r + 1));
    const x0 = Math.max(0, Math.floor(cx - r - 1)), x1 = Math.min(w, Math.ceil(cx + r + 1));
    for (let py = y0; py < y1; py++) {
      const dy = py + 0.5 - cy;
      for (let px = x0; px < x1; px++) {
        const at = (py * w + px) * 4 + 3;
        const level = pixels[at];
        if (level === 0) continue;
        const dx = px + 0.5 - cx;
        const coverage = Math.min(1, Math.max(0, r - Math.sqrt(dx * dx + dy * dy) + 0.5));
        if (coverage > 0) pixels[at] = Math.round(level * (1 - strength * coverage));
      }
    }
  }
  ctx.putImageData(image, left, top);
}

// A fill layer or its edge whose alpha is one level: the GPU adds that level to each pixel
// the shape covers at least half of, and nothing elsewhere (it rounds once per draw). Drawn
// opaque through a filter that maps coverage to one level or none, and added.
var refpoolFilterMade = false; // var: the page may load this script more than once
function refpoolOneLevelFilter() {
  const id = "refpool-one-level";
  if (!refpoolFilterMade) {
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("width", "0");
    svg.setAttribute("height", "0");
    svg.style.position = "absolute";
    // The filter's output is stored in 8 bits, truncated: 0.004 is one level (1.02).
    svg.innerHTML = `<filter id="${id}"><feComponentTransfer><feFuncA type="discrete" tableValues="0 0.004"/></feComponentTransfer></filter>`;
    document.documentElement.appendChild(svg);
    refpoolFilterMade = true;
  }
  return `url(#${id})`;
}

// The device rectangle p5.brush marked for the path just built: the filter works there only.
var refpoolPathRect = null;

function refpoolLayerDraw(ctx, how, level) {
  if (level !== 1) {
    ctx[how]();
    return;
  }
  ctx.save();
  if (refpoolPathRect) {
    const { minX, minY, maxX, maxY } = refpoolPathRect;
    const transform = ctx.getTransform();
    const bounds = new Path2D();
    bounds.rect(Math.floor(minX) - 1, Math.floor(minY) - 1, Math.ceil(maxX - minX) + 3, Math.ceil(maxY - minY) + 3);
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clip(bounds);
    ctx.setTransform(transform);
  }
  ctx.globalCompositeOperation = "lighter";
  ctx.filter = refpoolOneLevelFilter();
  ctx.fillStyle = ctx.strokeStyle = "rgb(255 0 0)";
  ctx[how]();
  ctx.restore();
}
