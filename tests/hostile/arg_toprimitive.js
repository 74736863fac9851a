// expect: defused<0.1
// runtime-only
// An argument whose Symbol.toPrimitive paints, hoping brush converts it while the harness
// thinks brush (not the sketch) is running. Arguments are copied in the sketch's own mode.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  let fired = 0;
  const x = [300];
  x[Symbol.toPrimitive] = function () {
    if (!fired) {
      fired = 1;
      fill("#1040c0");
      noStroke();
      rec\u0074(0, 0, 600, 300);
    }
    return 300;
  };
  brush.circle(x, 300, 120);
}
