// expect: forbidden_api
// runtime-only
function setup() {
  createCanvas(600, 600, WEBGL);
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
  new Comment("").ownerDocument.defaultView.location.reload();
}
