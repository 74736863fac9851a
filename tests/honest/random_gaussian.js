// profile: reference
// randomGaussian, map, constrain and round: the maths helpers models reach for.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f8f9fa");
  brush.noStroke();
  for (let i = 0; i < 10; i++) {
    const x = constrain(randomGaussian(300, 80), 60, 540);
    const y = map(i, 0, 9, 120, 480);
    const r = round(random(20, 60));
    brush.fill(i % 2 ? "#e76f51" : "#264653", 160);
    brush.circle(x, y, r);
  }
}
