// profile: reference
// p5 2.x's paletteLerp: petals coloured along a palette of three stops.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  const stops = [[color("#9d0208"), 0], ["#e36414", 0.5], [color(252, 191, 73), 1]];
  for (let i = 0; i < 6; i++) {
    const c = paletteLerp(stops, i / 5);
    brush.fill(c, 170);
    brush.circle(300 + 170 * cos(i), 300 + 170 * sin(i), 90);
  }
  console.log(red(paletteLerp(stops, 0.25)), green(paletteLerp(stops, 0.25)));
}
