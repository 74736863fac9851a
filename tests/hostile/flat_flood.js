// expect: blank_canvas
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#2040c0");
  brush.noStroke();
  brush.fill("#2040c0", 255);
  brush.circle(300, 300, 10);
}
