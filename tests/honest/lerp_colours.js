// profile: reference
// lerpColor between two colour objects for a gradient of brush fills.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background(250, 245, 235);
  brush.noStroke();
  const from = color("#ffb4a2");
  const to = color("#6d6875");
  for (let i = 0; i < 6; i++) {
    const c = lerpColor(from, to, i / 5);
    brush.fill(c, 180);
    brush.circle(100 + i * 80, 300, 70);
  }
}
