// expect: forbidden_api
// Round 3: a same-origin about:blank iframe handed over an unpatched WebGL prototype.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  const frame = document.createElement("iframe");
  document.body.appendChild(frame);
  const gl = frame.contentWindow.document.createElement("canvas").getContext("webgl2");
  gl.clear(gl.COLOR_BUFFER_BIT);
}
