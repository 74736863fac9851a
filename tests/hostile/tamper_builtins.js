// expect: p5_primitive
// runtime-only
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
  // Try to blind the harness before cheating.
  try { Array.prototype.push = function () { return 0; }; } catch (e) {}
  try { Reflect.apply = function () { return 0; }; } catch (e) {}
  try { Object.defineProperty = function () { return {}; }; } catch (e) {}
  const q = quad;
  q(0, 0, 600, 0, 600, 600, 0, 600);
}
