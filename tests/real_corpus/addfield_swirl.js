// A flow field from a function (the p5.brush idiom models write most), trails along it.
function setup() {
  createCanvas(600, 600, WEBGL);
  angleMode(DEGREES);
  brush.scaleBrushes(2.5);
}

function draw() {
  background("#fbf6ec");
  translate(-width / 2, -height / 2);
  brush.addField("eddy", (t, field) => {
    const cols = field.length, rows = field[0].length;
    for (let c = 0; c < cols; c++) {
      for (let r = 0; r < rows; r++) {
        const dx = c - cols / 2, dy = r - rows / 2;
        field[c][r] = atan2(dy, dx) + 90 + noise(c * 0.03, r * 0.03, t) * 60;
      }
    }
    return field;
  });
  brush.field("eddy");
  brush.set("HB", "#3b5b7a", 1.6);
  for (let i = 0; i < 60; i++) {
    brush.flowLine(random(120, 480), random(120, 480), random(60, 140), 0);
  }
  brush.noField();
  brush.noStroke();
  brush.fill("#d98b6f", 140);
  brush.fillBleed(0.3);
  brush.circle(300, 300, 70);
  noLoop();
}
