// profile: reference
// The sketch's own helpers may have names that look like p5's (load*, save*, text*), a class
// may have a method (not one called `line`: the env's gate reads any `line(` not after a dot
// as a bare p5 primitive), and a regex may contain a quote.
const state = [];
function loadPalette() {
  return ["#e2583e", "#f2a65a", "#7a3b2e"];
}
function saveState(x) {
  state.push(x);
}
function textureWash(c, x, y, r) {
  brush.fill(c, 150);
  brush.circle(x, y, r);
}
class Petal {
  constructor(a) {
    this.a = a;
  }
  edgePoint(r) {
    return [300 + r * Math.cos(this.a), 300 + r * Math.sin(this.a)];
  }
}
const label = "petal's edge".replace(/'/g, "");
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  const palette = loadPalette();
  for (let i = 0; i < 5; i++) {
    const p = new Petal((i / 5) * TWO_PI).edgePoint(90);
    saveState(p);
    textureWash(palette[i % palette.length], p[0], p[1], 60 + label.length);
  }
}
