// expect: forbidden_api @5
// A dynamic import whose rejection the sketch catches: the realm's CSP reports it.
function setup() {
  createCanvas(600, 600, WEBGL);
  import("http://127.0.0.1:9/x.js").catch(() => 0);
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
