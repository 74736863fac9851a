// profile: permissive
// scale() and the permissive profile's polygon() and rect() with their options.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  background("#edf2f4");
  push();
  scale(1.2);
  brush.noStroke();
  brush.fill("#ef233c", 170);
  const poly = brush.polygon([[-120, -80], [100, -120], [140, 90], [-90, 120]]);
  pop();
  brush.fill("#8d99ae", 140);
  brush.rect(-220, 150, 120, 80);
  brush.fill("#2b2d42", 120);
  poly.fill();
}
