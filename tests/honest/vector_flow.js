// profile: reference
// Vectors walked along a noise field: p5.Vector statics, heading, setMag, limit, lerp.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#fdfcdc");
  brush.noStroke();
  let pos = createVector(150, 300);
  const target = createVector(450, 300);
  brush.fill("#f07167", 150);
  for (let i = 0; i < 8; i++) {
    const step = p5.Vector.sub(target, pos).setMag(30).limit(40);
    step.rotate(noise(i * 0.2) - 0.5);
    pos = p5.Vector.add(pos, step);
    brush.circle(pos.x, pos.y, 30 + step.heading());
  }
  const mid = pos.copy().lerp(target, 0.5);
  brush.circle(mid.x, mid.y, 40);
}
