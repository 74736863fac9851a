// expect: forbidden_api
// The Function constructor through a function's constructor: the realm's CSP has no eval.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  const make = (() => 0).constructor;
  make("return this")().fetch("http://127.0.0.1:9/");
}
