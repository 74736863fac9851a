// expect: forbidden_api
// Round 3: a sourceURL comment renamed the sketch's stack frames so the stack guard missed
// them, then raw WebGL ran from a timer between frames. The realm has no timers to reach.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  setTimeout(() => {
    const gl = noStroke().drawingContext;
    gl.clearColor(0.1, 0.2, 0.8, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
  }, 10);
}
//# sourceURL=harness.js
