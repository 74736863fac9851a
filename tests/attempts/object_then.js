// expect: tamper @5
// A then planted on Object.prototype.
function setup() {
  createCanvas(600, 600, WEBGL);
  Object.prototype.then = undefined;
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
