// expect: forbidden_api @5
// importScripts, caught.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { importScripts("http://127.0.0.1:9/x.js"); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
