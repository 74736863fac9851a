// expect: forbidden_api @5
// constructor.constructor from a plain object, caught.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { ({}).constructor.constructor("return 1")(); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
