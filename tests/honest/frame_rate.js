// profile: reference
// frameRate(1) in a looping sketch: frames are counted, the harness must not wait a minute.
function setup() {
  createCanvas(600, 600, WEBGL);
  frameRate(1);
}
function draw() {
  if (frameCount > 1) return;
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
}
