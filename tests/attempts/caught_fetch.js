// expect: forbidden_api @5
// A fetch the sketch catches itself, then an honest circle: the attempt is the verdict.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { fetch("http://127.0.0.1:9/x"); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
