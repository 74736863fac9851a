// Builds a brush.Plot by hand: the env's gate refuses it (Plot is not on its method list).
function setup() {
  createCanvas(600, 600, WEBGL);
  background("#fbf7f0");
  brush.set("HB", "#333", 1.2);
  const plot = new brush.Plot("curve");
  plot.addSegment(-90, 120, 1);
  plot.addSegment(-60, 80, 0.8);
  brush.stroke("#333");
  plot.draw(0, 100);
  brush.line(-100, 0, 100, 0);
}
