// profile: reference
// A few animated frames: draw() runs until frameCount reaches 5, then noLoop().
function setup() {
  createCanvas(600, 600, WEBGL);
}
function draw() {
  translate(-width / 2, -height / 2);
  if (frameCount === 1) background("#f6efe2");
  brush.noStroke();
  brush.fill("#1d3557", 200);
  brush.circle(150 + frameCount * 60, 300, 60);
  if (frameCount >= 5) noLoop();
}
