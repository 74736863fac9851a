// expect: tamper @5
// A then planted in setup(), then a draw() that never returns: seen after setup(), posted at once.
function setup() {
  createCanvas(600, 600, WEBGL);
  Object.prototype.then = undefined;
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
function draw() {
  for (;;) { /* and never answer */ }
}
