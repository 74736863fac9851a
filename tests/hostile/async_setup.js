// expect: async_sketch
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
