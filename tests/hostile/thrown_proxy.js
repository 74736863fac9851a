// expect: runtime_error|async_sketch|raw_webgl
// runtime-only
// Throws a Proxy: the old harness asked it `instanceof` in its own frames, so the trap ran
// with the guards down and could reach the real window through the p5 instance.
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
  throw new Proxy({}, {
    getPrototypeOf() {
      const gl = noStroke().drawingContext;
      gl.enable(gl.SCISSOR_TEST);
      gl.scissor(0, 0, 400, 400);
      gl.clearColor(0.1, 0.2, 0.8, 1);
      gl.clear(gl.COLOR_BUFFER_BIT);
      return null;
    },
  });
}
