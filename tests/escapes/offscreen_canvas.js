// expect: forbidden_api
// A worker has OffscreenCanvas and createImageBitmap; the sketch's realm has neither.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  const gl = new OffscreenCanvas(600, 600).getContext("webgl2");
  gl.clear(gl.COLOR_BUFFER_BIT);
}
