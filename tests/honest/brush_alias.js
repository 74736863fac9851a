// profile: reference
// brush under another name.
const b = brush;
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  b.noStroke();
  b.fill("#e2583e", 200);
  b.circle(300, 300, 120);
  // The env's gate reads the text: it wants one painting call on `brush` by name.
  brush.circle(300, 300, 40);
}
