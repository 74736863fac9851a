// expect: async_sketch|raw_webgl
// runtime-only
// A microtask (Array.fromAsync, no timers needed) runs sketch code after draw() returned; the
// old harness let p5 functions called from there hand back the real p5 instance.
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
  Array.fromAsync([1]).then(() => {
    const gl = noStroke().drawingContext;
    gl.enable(gl.SCISSOR_TEST);
    gl.scissor(0, 0, 400, 400);
    gl.clearColor(0.1, 0.2, 0.8, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.disable(gl.SCISSOR_TEST);
  });
}
