// expect: tamper @5
// Math.random replaced (the seeded stream belongs to the realm).
function setup() {
  createCanvas(600, 600, WEBGL);
  Math.random = () => 0.5;
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
