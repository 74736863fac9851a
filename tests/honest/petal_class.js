// profile: reference
// A class with a constructor and a method that paints, and an array of instances.
class Petal {
  constructor(angle, reach, colour) {
    this.angle = angle;
    this.reach = reach;
    this.colour = colour;
  }
  show(cx, cy) {
    brush.fill(this.colour, 190);
    brush.beginShape(0.3);
    brush.vertex(cx, cy);
    brush.vertex(cx + cos(this.angle - 20) * this.reach, cy + sin(this.angle - 20) * this.reach);
    brush.vertex(cx + cos(this.angle + 20) * this.reach, cy + sin(this.angle + 20) * this.reach);
    brush.endShape(true);
  }
}
let petals = [];
function setup() {
  createCanvas(600, 600, WEBGL);
  angleMode(DEGREES);
  for (let i = 0; i < 6; i++) petals.push(new Petal(i * 60, 180, "#d9534f"));
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#fbf5ea");
  brush.noStroke();
  for (const p of petals) p.show(300, 300);
}
