// expect: canvas_size
// Round 3: pixelDensity(2) after an await gave a 1200x1200 PNG that was judged.
async function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
  await 0;
  pixelDensity(2);
}
function draw() {
  translate(-width / 2, -height / 2);
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 300);
}
