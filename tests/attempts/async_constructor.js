// expect: forbidden_api @5
// The AsyncFunction constructor through a prototype, caught.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { Object.getPrototypeOf(async function () {}).constructor("return 1")(); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
