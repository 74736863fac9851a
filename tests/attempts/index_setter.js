// expect: tamper @5
// A setter for index 0 on Array.prototype swallows the first item put into any empty list.
function setup() {
  createCanvas(600, 600, WEBGL);
  Object.defineProperty(Array.prototype, "0", { set(v) { /* swallowed */ }, configurable: true });
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
