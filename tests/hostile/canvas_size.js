// expect: canvas_size
// runtime-only
const SIZE = 900;
function setup() {
  createCanvas(SIZE, SIZE, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
}
