// Four pale overlapping discs (opacity 30): near the 0.005 floor, where the env's GPU rounding decides.
function setup() {
  createCanvas(600, 600, WEBGL);
  background("#fffdf7");
  brush.noStroke();
  brush.fillTexture(0.3, 0.2);
  for (let i = 0; i < 4; i++) {
    brush.fill("#6f93bd", 30);
    brush.fillBleed(0.15);
    brush.circle(-120 + i * 80, -40 + i * 30, 110);
  }
}
