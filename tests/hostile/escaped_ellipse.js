// expect: p5_primitive
// runtime-only
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
  ellips\u0065(300, 300, 200, 200);
}
