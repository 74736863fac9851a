// expect: tamper @5
// A method the recorder itself calls, planted to hang: found before the recorder runs it.
function setup() {
  createCanvas(600, 600, WEBGL);
  Map.prototype.get = function () { for (;;) { /* never answer */ } };
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
