// expect: tamper @5
// An iterator planted to hang, then a colour made: found before the colour is made.
function setup() {
  createCanvas(600, 600, WEBGL);
  Array.prototype[Symbol.iterator] = function* () { for (;;) { /* never yields */ } };
  const petal = paletteLerp([["#e2583e", 0], ["#f4a259", 1]], 0.4);
  brush.noStroke();
  brush.fill(petal, 200);
  brush.circle(0, 0, 220);
}
