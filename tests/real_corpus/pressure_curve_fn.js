// A brush whose pressure curve is a function of the stroke's progress (0 to 1): swelling
// stems, thin at both ends.
function setup() {
  createCanvas(600, 600, WEBGL);
  background("#fffaf3");
  brush.add("swell", {
    type: "default", weight: 4, scatter: 0.1, sharpness: 0.6, grain: 6, opacity: 160, spacing: 0.3,
    pressure: { type: "custom", curve: (x) => 0.3 + 1.2 * Math.sin(x * PI), min_max: [0.5, 1.4] },
    rotate: "natural",
  });
  brush.set("swell", "#7a3b52", 3);
  for (let i = 0; i < 5; i++) {
    brush.line(-220, -160 + i * 80, 220, -120 + i * 80);
  }
}
