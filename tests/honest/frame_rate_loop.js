// profile: reference
// frameRate(1) and no noLoop(): frames are counted, not timed, so this never times out.
function setup() {
  createCanvas(600, 600, WEBGL);
  frameRate(1);
}
function draw() {
  if (frameCount > 1) return; // one painted frame, then idle frames until the capture
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#9d4edd", 200);
  brush.circle(300, 300, 90);
}
