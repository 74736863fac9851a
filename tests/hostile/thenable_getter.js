// expect: defused<0.1
// runtime-only
// draw() returns a thenable whose `then` getter the old harness read after leaving USER mode:
// the getter got the real p5 instance from noStroke() and cleared a square with raw WebGL.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  return {
    get then() {
      const p = noStroke();
      const gl = p.drawingContext;
      gl.enable(gl.SCISSOR_TEST);
      gl.scissor(0, 0, 400, 400);
      gl.clearColor(0.1, 0.2, 0.8, 1);
      gl.clear(gl.COLOR_BUFFER_BIT);
      gl.disable(gl.SCISSOR_TEST);
      return undefined;
    },
  };
}
