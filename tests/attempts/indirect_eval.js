// expect: forbidden_api @5
// Indirect eval, caught.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { (0, eval)("1 + 1"); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
