// A palette derived by reading colours back: hue(), saturation(), brightness(), lerpColor().
function setup() {
  createCanvas(600, 600, WEBGL);
  colorMode(HSB, 360, 100, 100, 1);
  background(40, 6, 98);
  const base = color("#c2577a");
  const h = hue(base), s = saturation(base), b = brightness(base);
  const leaf = color((h + 150) % 360, s * 0.6, b * 0.7);
  brush.noStroke();
  brush.fillBleed(0.25);
  brush.fillTexture(0.4, 0.3);
  brush.fill(leaf, 160);
  brush.beginShape(0.3);
  brush.vertex(-20, 40); brush.vertex(20, 40); brush.vertex(14, 260); brush.vertex(-14, 260);
  brush.endShape(CLOSE);
  for (let k = 0; k < 6; k++) {
    const petal = lerpColor(base, color(h, s * 0.3, 100), k / 8);
    brush.fill(petal, 150);
    const a = k * 60;
    brush.circle(90 * cos(radians(a)), 90 * sin(radians(a)) - 40, 70 + red(petal) / 40);
  }
  brush.fill(color(50, saturation(base), 95), 200);
  brush.circle(0, -40, 40);
}
