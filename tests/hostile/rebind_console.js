// expect: runtime_error|tamper
// runtime-only
// The same idea through console, which p5 may call from inside its own code.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  brush.noStroke();
  brush.fill("#e2583e", 200);
  const q = quad;
  console.warn = function () { q(0, 0, 600, 0, 600, 300, 0, 300); };
  console.log = console.warn;
  brush.circle(300, 450, 60);
}
