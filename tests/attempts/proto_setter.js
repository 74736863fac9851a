// expect: tamper @5
// A prototype swapped with __proto__ on an intrinsic.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { Object.setPrototypeOf(Array.prototype, null); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
