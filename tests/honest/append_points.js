// profile: reference
// p5 1.x's append() still builds arrays of points; the points become one brush shape.
let points = [];
function setup() {
  createCanvas(600, 600, WEBGL);
  for (let i = 0; i < 7; i++) {
    const a = (i / 7) * TWO_PI;
    points = append(points, [300 + 160 * cos(a), 300 + 160 * sin(a)]);
  }
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f1faee");
  brush.noStroke();
  brush.fill("#457b9d", 170);
  brush.beginShape(0.3);
  for (const [x, y] of points) brush.vertex(x, y);
  brush.endShape(true);
}
