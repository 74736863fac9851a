// expect: no_webgl_canvas
// Round 3: a 2D canvas made after an await made capture() report a lost WebGL context, an
// infrastructure error (retried, never scored). It is the sketch's error, and says so.
async function setup() {
  await 0;
  createCanvas(600, 600);
  noLoop();
}
function draw() {
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 60);
}
