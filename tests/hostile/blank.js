// expect: blank_canvas
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#f6efe2", 160);
  brush.circle(300, 300, 20);
}
