// expect: raw_webgl
// Round 2 a08: a then getter on draw()'s return value reaching for the GL context.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  return {
    get then() {
      const gl = noStroke().drawingContext;
      gl.clearColor(0.1, 0.2, 0.8, 1);
      gl.clear(gl.COLOR_BUFFER_BIT);
      return undefined;
    },
  };
}
