// profile: reference
// structuredClone to copy a palette before changing it, and performance.now() as a clock.
const BASE = { petals: ["#c1121f", "#e36414"], centre: "#fcbf49" };
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
  const started = performance.now();
  const palette = structuredClone(BASE);
  palette.petals.push("#9d0208");
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  palette.petals.forEach((colour, i) => {
    brush.fill(colour, 180);
    brush.circle(200 + i * 100, 300, 110);
  });
  brush.fill(palette.centre, 200);
  brush.circle(300, 300, 60 + (performance.now() - started) / 100);
  console.log(BASE.petals.length, palette.petals.length); // 2 3: the copy is its own
}
