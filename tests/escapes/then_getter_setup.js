// expect: p5_primitive
// Round 2 a06: a then getter on setup()'s return value, read where the old harness had its
// guards down. In the realm it is the sketch's own code, and a raw rect is still refused.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
  return {
    get then() {
      fill("#1040c0");
      rect(-300, -300, 600, 600);
      return undefined;
    },
  };
}
function draw() {
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 60);
}
