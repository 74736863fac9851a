// expect: tamper @5
// Object.defineProperty on an intrinsic: a then getter on every array.
function setup() {
  createCanvas(600, 600, WEBGL);
  Object.defineProperty(Array.prototype, "then", { get() { return undefined; }, configurable: true });
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
