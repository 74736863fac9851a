// A faint watercolour: many low-opacity fills stacked, the way models paint a soft sky.
function setup() {
  createCanvas(600, 600, WEBGL);
  background("#fffdf7");
  brush.noStroke();
  brush.fillTexture(0.3, 0.2);
  for (let i = 0; i < 6; i++) {
    brush.fill("#7aa0c8", 24);
    brush.fillBleed(0.2);
    brush.rect(-280 + i * 20, -260 + i * 25, 420, 300);
  }
  brush.fill("#d98ca0", 22);
  brush.circle(80, 120, 130);
  brush.fill("#9cbf8a", 22);
  brush.circle(-120, 160, 110);
}
