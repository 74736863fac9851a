// expect: async_sketch
// runtime-only
const later = Array.fromAsync;
function setup() {
  createCanvas(600, 600, WEBGL);
  return later([1]);
}
function draw() {
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
}
