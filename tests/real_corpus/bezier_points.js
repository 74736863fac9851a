// Petals placed with bezierPoint()/bezierTangent() and a stem traced with splinePoint().
function setup() {
  createCanvas(600, 600, WEBGL);
  background("#fdf8f0");
  brush.noStroke();
  brush.fillBleed(0.2);
  brush.fill("#5f8d4e", 170);
  brush.beginShape(0.2);
  for (let i = 0; i <= 10; i++) {
    const t = i / 10;
    brush.vertex(splinePoint(-40, 0, 30, 80, t) - 8, splinePoint(300, 260, 40, -20, t));
  }
  for (let i = 10; i >= 0; i--) {
    const t = i / 10;
    brush.vertex(splinePoint(-40, 0, 30, 80, t) + 8, splinePoint(300, 260, 40, -20, t));
  }
  brush.endShape(CLOSE);
  brush.fill("#e07a5f", 160);
  for (let i = 0; i < 7; i++) {
    const t = i / 6;
    const x = bezierPoint(-150, -60, 60, 150, t), y = bezierPoint(-60, -200, -200, -60, t);
    const dx = bezierTangent(-150, -60, 60, 150, t), dy = bezierTangent(-60, -200, -200, -60, t);
    const a = Math.atan2(dy, dx);
    brush.beginShape(0.5);
    for (let k = 0; k < 8; k++) {
      const u = (k / 8) * Math.PI * 2;
      brush.vertex(x + 40 * Math.cos(u) * Math.cos(a) - 18 * Math.sin(u) * Math.sin(a),
                   y + 40 * Math.cos(u) * Math.sin(a) + 18 * Math.sin(u) * Math.cos(a));
    }
    brush.endShape(CLOSE);
  }
}
