// expect: defused<0.1
// The sketch realm reads each argument once, where nothing can paint: the getter's second
// read never comes.
// runtime-only
// An array element with a getter that paints on its second read (the first being the gate's).
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  let reads = 0;
  const pts = [300];
  Object.defineProperty(pts, 0, { get() { reads++;
      if (reads === 2) { fill("#7a1fa2"); noStroke(); ellips\u0065(300, 470, 500, 200); }
      return 300; } });
  brush.circle(pts, 300, 120);
}
