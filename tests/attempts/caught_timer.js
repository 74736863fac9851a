// expect: forbidden_api @5
// A timer, caught.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { setTimeout(() => 0, 0); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
