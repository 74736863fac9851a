// expect: tamper @5
// Promise.prototype.then replaced: the realm must answer through its own copy.
function setup() {
  createCanvas(600, 600, WEBGL);
  Promise.prototype.then = function () { return this; };
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
