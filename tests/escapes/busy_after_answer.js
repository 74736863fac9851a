// expect: timeout
// Round 3: work left running after the sketch answered slowed the next job on the slot
// 10x. A microtask loop never lets the realm answer; the page stops the worker for good.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  const spin = () => Promise.resolve().then(spin);
  spin();
}
