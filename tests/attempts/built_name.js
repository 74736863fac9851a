// expect: forbidden_api @5
// A global name built at run time, caught.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { const f = globalThis["fe" + "tch"]; f("http://127.0.0.1:9/"); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
