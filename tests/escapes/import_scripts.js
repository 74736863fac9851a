// expect: forbidden_api
// importScripts and fetch are a worker's network: gone from the realm (PORT is filled in).
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  importScripts("http://127.0.0.1:PORT/import");
}
