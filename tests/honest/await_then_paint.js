// profile: reference
// An async setup() that awaits before it paints (p5 2.x allows async setup).
async function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
  await 0;
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#2a9d8f", 190);
  brush.circle(300, 300, 140);
}
