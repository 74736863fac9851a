// A field re-evaluated each frame with refreshField(t), the documented animation idiom.
let frames = 0;
function setup() {
  createCanvas(600, 600, WEBGL);
  background("#f7f3ea");
  brush.addField("breeze", function (t, field) {
    for (let col = 0; col < field.length; col++)
      for (let row = 0; row < field[0].length; row++)
        field[col][row] = 20 * Math.sin(col * 0.05 + t) + 15 * Math.cos(row * 0.07 - t);
    return field;
  });
  brush.field("breeze");
}

function draw() {
  brush.refreshField(frames * 0.8);
  brush.set("2B", "#2f4f3a", 1.2);
  for (let i = 0; i < 12; i++) brush.flowLine(-260, -240 + i * 40 + frames * 6, 480, 0);
  frames++;
  if (frames >= 3) {
    brush.noField();
    brush.noStroke();
    brush.fill("#9cc3a0", 120);
    brush.rect(-120, -120, 240, 240);
    noLoop();
  }
}
