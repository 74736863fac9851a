// profile: permissive
// p5.brush's documented options object.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.hatchStyle("HB", "#7a3b2e", 1);
  brush.hatch(8, PI / 4, { rand: 0.1, continuous: false, gradient: 0.2 });
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.rect(150, 150, 300, 300);
}
