// profile: reference
// describe() for accessibility and pixelDensity(1) are ordinary set-up calls.
function setup() {
  createCanvas(600, 600, WEBGL);
  pixelDensity(1);
  describe("A red watercolour flower on cream paper.");
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
  if (frameCount >= 3) noLoop();
}
