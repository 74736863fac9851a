// expect: forbidden_api @5
// postMessage to the page, caught.
function setup() {
  createCanvas(600, 600, WEBGL);
  try { postMessage({ status: "done" }); } catch (e) { /* quietly */ }
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
