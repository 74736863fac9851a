// expect: forbidden_api @5
// The Function constructor through a function's constructor, caught (the CSP throws EvalError).
function setup() {
  createCanvas(600, 600, WEBGL);
  try { (() => 0).constructor("return this")(); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
