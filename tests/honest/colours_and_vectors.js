// profile: reference
// Colour objects with setAlpha, vector maths, and random() over an array of objects.
const petals = [
  { hue: "#e2583e", r: 70 },
  { hue: "#f2a65a", r: 90 },
  { hue: "#b8432f", r: 60 },
];
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  const centre = createVector(300, 300);
  for (let i = 0; i < 6; i++) {
    const dir = createVector(1, 0).rotate((i / 6) * TWO_PI);
    const at = centre.copy().add(dir.copy().mult(110));
    const petal = random(petals);
    const c = color(petal.hue);
    c.setAlpha(160);
    brush.fill(c, 180);
    brush.circle(at.x, at.y, petal.r);
  }
}
