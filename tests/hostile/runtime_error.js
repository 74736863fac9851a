// expect: runtime_error
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  brush.noStroke();
  brush.fill("#e2583e", 200);
  const petals = undefined;
  brush.circle(petals.x, 300, 120);
}
