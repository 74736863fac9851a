// expect: tamper @5
// A bind planted on Function.prototype (round 3 aimed one at the p5 instance).
function setup() {
  createCanvas(600, 600, WEBGL);
  Object.getPrototypeOf(() => 0).bind = function (self) { return this; };
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
