// expect: async_sketch|raw_webgl
// runtime-only
// An async draw(): everything after `await` runs as a microtask, outside USER mode.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
async function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  await 0;
  const ctx = noStroke().canvas.ownerDocument.defaultView.document.createElement("canvas").getContext("2d");
  const gl = noFill().drawingContext;
  gl.enable(gl.SCISSOR_TEST);
  gl.scissor(0, 0, 400, 400);
  gl.clearColor(0.1, 0.2, 0.8, 1);
  gl.clear(gl.COLOR_BUFFER_BIT);
  ctx.fillText("x", 0, 0);
}
