// Calls from the env's method list beyond the prompt's ten: load, listFields, box, hatch, wash.
function setup() {
  createCanvas(600, 600, WEBGL);
  brush.load();
  background("#faf6ee");
  const fields = brush.listFields();
  brush.field(fields.indexOf("waves") >= 0 ? "waves" : fields[0]);
  const pens = brush.box();
  brush.hatchStyle(pens.indexOf("cpencil") >= 0 ? "cpencil" : pens[0], "#6b4f3a", 1.4);
  brush.hatch(8, 30, { rand: 0.1 });
  brush.rect(-150, -100, 300, 220);
  brush.noHatch();
  brush.noStroke();
  brush.fill("#d4a35a", 130);
  brush.rect(-150, -100, 300, 220);
  brush.noField();
  brush.polygon([[-200, 180], [200, 180], [160, 240], [-160, 240]]).wash("#8fb1c9", 140);
}
