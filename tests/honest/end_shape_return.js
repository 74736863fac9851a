// profile: permissive
// p5.brush's documented return values: endShape() gives a Plot to reuse, circle() a triple.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#faf3e0");
  brush.noStroke();
  brush.fill("#bc4749", 170);
  brush.beginShape(0.3);
  brush.vertex(200, 200);
  brush.vertex(400, 220);
  brush.vertex(380, 420);
  brush.vertex(210, 400);
  const shape = brush.endShape(true);
  brush.fill("#a7c957", 120);
  shape.fill(60, 40);
  const [plot, x, y] = brush.circle(300, 300, 50);
  brush.hatch(6, 0.8);
  brush.hatchStyle("HB", "#335c67", 1);
  plot.hatch(x, y);
}
