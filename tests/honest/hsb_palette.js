// profile: reference
// HSB colour mode with colour objects and alpha, as models often write it.
function setup() {
  createCanvas(600, 600, WEBGL);
  colorMode(HSB, 360, 100, 100, 1);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background(40, 10, 97);
  brush.noStroke();
  for (let i = 0; i < 5; i++) {
    const c = color(10 + i * 12, 70, 90, 0.8);
    brush.fill(c, 170);
    brush.circle(180 + i * 60, 300 + (i % 2) * 40, 70);
  }
}
