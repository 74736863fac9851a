// A custom brush whose tip is drawn by a function (p5.brush's documented brush.add idiom):
// leaf-shaped stamps along two lines.
function setup() {
  createCanvas(600, 600, WEBGL);
  angleMode(DEGREES);
  background("#fffaf3");
  brush.add("leafstamp", {
    type: "custom", weight: 1.8, scatter: 0.5, opacity: 110, spacing: 0.55,
    pressure: [0.7, 1.3, 0.7], rotate: "random", markerTip: false, noise: 0.35,
    tip: (_m) => {
      _m.noStroke();
      _m.fill(30);
      _m.push();
      _m.rotate(35);
      _m.ellipse(0, -6, 44, 20);
      _m.pop();
      _m.rect(-2, 2, 4, 26);
    },
  });
  brush.set("leafstamp", "#3f7d4e", 6);
  brush.line(-200, -100, 200, 120);
  brush.line(-150, 150, 180, -160);
}
