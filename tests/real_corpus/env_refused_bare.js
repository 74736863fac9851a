// Paints with a bare p5 primitive: the env's gate refuses it (bare_primitives).
function setup() {
  createCanvas(600, 600, WEBGL);
  background("#fbf7f0");
  brush.noStroke();
  brush.fill("#c0504d", 150);
  brush.circle(0, 0, 80);
  ellipse(0, 150, 60, 40);
}
