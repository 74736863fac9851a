// expect: forbidden_api @5
// Storage, caught.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { indexedDB.open("x"); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
