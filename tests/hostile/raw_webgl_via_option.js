// expect: forbidden_api
// runtime-only
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
  const gl = new Option().ownerDocument.querySelector("canvas").getContext("webgl2");
  gl.enable(gl.SCISSOR_TEST);
  gl.scissor(0, 0, 300, 300);
  gl.clearColor(0.8, 0.1, 0.1, 1);
  gl.clear(gl.COLOR_BUFFER_BIT);
}
