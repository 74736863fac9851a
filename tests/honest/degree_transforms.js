// profile: reference
// push/pop with translate and rotate in degrees: one petal shape drawn around a centre.
function setup() {
  createCanvas(600, 600, WEBGL);
  angleMode(DEGREES);
  noLoop();
}
function petal() {
  brush.beginShape(0.4);
  brush.vertex(0, 0);
  brush.vertex(40, -110);
  brush.vertex(0, -190);
  brush.vertex(-40, -110);
  brush.endShape(true);
}
function draw() {
  background("#fff8ef");
  brush.noStroke();
  brush.fill("#e07a5f", 180);
  for (let i = 0; i < 8; i++) {
    push();
    rotate(i * 45);
    petal();
    pop();
  }
  brush.fill("#3d405b", 220);
  brush.circle(0, 0, 36);
}
