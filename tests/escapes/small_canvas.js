// expect: canvas_size
// Round 3: a 64x64 canvas gave a 64x64 PNG that was judged.
function setup() {
  createCanvas(64, 64, WEBGL);
  noLoop();
}
function draw() {
  brush.noStroke();
  brush.fill("#e2583e", 255);
  brush.circle(0, 0, 60);
}
