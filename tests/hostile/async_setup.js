// expect: defused<0.1
// Painting after an await inside setup() is now honest (tests/honest/await_then_paint.js);
// kept to show it paints no more than its calls (this circle is off the canvas).
// runtime-only
// An async setup() is fine while it paints synchronously; this one paints after an await,
// which runs later, outside setup(), and must trip.
async function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
  await 0;
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 120);
}
