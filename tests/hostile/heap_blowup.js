// expect: crash|timeout
function setup() {
  createCanvas(600, 600, WEBGL);
  const hoard = [];
  while (true) {
    hoard[hoard.length] = new Array(1000000).fill(hoard.length);
  }
}
function draw() {
  brush.circle(300, 300, 120);
}
