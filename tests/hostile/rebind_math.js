// expect: tamper
// p5.brush runs on the painting page, never calling into the sketch's realm: the trap never fires,
// and reassigning the global Math is itself the verdict (issue 35).
// runtime-only
// Rebinds the global Math so that p5.brush calls the sketch's max() mid-brush, where a raw
// quad would pass for brush work. Global bindings of built-ins are locked: the assignment throws.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  const M = Math;
  const fake = {};
  for (const k of Object.getOwnPropertyNames(M)) fake[k] = M[k];
  let fired = false;
  const q = quad;
  fake.max = function (...a) {
    if (!fired) {
      fired = true;
      fill("#1040c0");
      noStroke();
      q(0, 0, 600, 0, 600, 300, 0, 300);
    }
    return M.max(...a);
  };
  Math = fake;
  brush.circle(300, 450, 60);
  Math = M;
}
