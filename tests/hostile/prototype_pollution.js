// expect: tamper
// In the sketch's own realm the getters see only that realm's objects (no GL context to find),
// and planting them on Object.prototype is itself the verdict (issue 35).
// runtime-only
// Plants getter/setter pairs on Object.prototype that watch every internal object p5 touches,
// finds the WebGL context among them, and paints with it. Worked until Object.prototype was
// frozen: now planting them throws.
let caught = null;
const seen = new Set();
const store = new Map();
for (const key of ["_renderer", "drawingContext", "GL", "_pInst", "states", "isP3D", "elt", "_curElement", "webglVersion", "_isGlobal", "canvas"]) {
  {
    Object.defineProperty(Object.prototype, key, {
      configurable: true,
      get() { if (this && this !== Object.prototype) seen.add(this); return store.has(this) ? store.get(this)[key] : undefined; },
      set(v) { if (!store.has(this)) store.set(this, Object.create(null)); store.get(this)[key] = v; seen.add(this); },
    });
  }
}
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
  let gl = null;
  for (const obj of seen) {
    const vals = [obj, ...(store.has(obj) ? Object.values(store.get(obj)) : [])];
    for (const v of vals) {
      if (v && typeof v.clearColor === "function") gl = v;
      if (v && v.GL && typeof v.GL.clearColor === "function") gl = v.GL;
      if (v && v.drawingContext && typeof v.drawingContext.clearColor === "function") gl = v.drawingContext;
    }
  }
  {
    if (gl) { gl.enable(gl.SCISSOR_TEST); gl.scissor(0, 0, 300, 300); gl.clearColor(0.1, 0.2, 0.9, 1); gl.clear(gl.COLOR_BUFFER_BIT); }
    console.log("seen " + seen.size + " gl " + !!gl);
  }
}
