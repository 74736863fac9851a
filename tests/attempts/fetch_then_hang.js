// expect: forbidden_api @5
// A caught fetch, then a loop that never ends: the attempt, posted at the touch, is the verdict, not the timeout.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { fetch("http://127.0.0.1:9/x"); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
  for (;;) { /* and never answer */ }
}
