// One very light wash per shape (opacity 40 of 255): a pale but visible painting.
function setup() {
  createCanvas(600, 600, WEBGL);
  background(252, 250, 244);
  brush.noStroke();
  brush.fillBleed(0.1);
  brush.fill("#5a8a6a", 40);
  brush.beginShape(0.3);
  for (let a = 0; a < 360; a += 30) brush.vertex(180 * Math.cos(a * Math.PI / 180), 140 * Math.sin(a * Math.PI / 180));
  brush.endShape(CLOSE);
  brush.fill("#c0704a", 40);
  brush.circle(60, -40, 90);
}
