// expect: forbidden_api @5
// A second realm (a nested Worker), caught.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { new Worker("data:text/javascript,1"); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
