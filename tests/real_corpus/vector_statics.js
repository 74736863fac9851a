// Geometry with p5.Vector's statics (fromAngle, add, lerp, dist, mult).
function setup() {
  createCanvas(600, 600, WEBGL);
  angleMode(DEGREES);
  background("#f6f1e7");
  const centre = createVector(0, -30);
  brush.noStroke();
  brush.fillBleed(0.3);
  brush.fillTexture(0.5, 0.2);
  brush.fill("#8e6bbf", 150);
  for (let k = 0; k < 5; k++) {
    const dir = p5.Vector.fromAngle(k * 72, 110);
    const tip = p5.Vector.add(centre, dir);
    const mid = p5.Vector.lerp(centre, tip, 0.55);
    const side = p5.Vector.mult(p5.Vector.fromAngle(k * 72 + 90, 1), p5.Vector.dist(centre, tip) * 0.3);
    brush.beginShape(0.4);
    brush.vertex(centre.x, centre.y);
    brush.vertex(mid.x + side.x, mid.y + side.y);
    brush.vertex(tip.x, tip.y);
    brush.vertex(mid.x - side.x, mid.y - side.y);
    brush.endShape(CLOSE);
  }
  brush.fill("#f2c14e", 200);
  brush.circle(centre.x, centre.y, 28);
  brush.set("2B", "#4a6b3a", 2);
  brush.line(0, 0, 0, 260);
}
