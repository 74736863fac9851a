// profile: reference
// randomSeed/noiseSeed and noise() driving the shape: same seed, same painting.
function setup() {
  createCanvas(600, 600, WEBGL);
  randomSeed(42);
  noiseSeed(42);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f3eee3");
  brush.noStroke();
  brush.fill("#6a994e", 180);
  brush.beginShape(0.2);
  for (let a = 0; a < TWO_PI; a += 0.3) {
    const r = 120 + noise(cos(a) + 1, sin(a) + 1) * 120;
    brush.vertex(300 + r * cos(a), 300 + r * sin(a));
  }
  brush.endShape(true);
  brush.fill("#f2e8cf", 200);
  brush.circle(300 + random(-10, 10), 300 + random(-10, 10), 40);
}
