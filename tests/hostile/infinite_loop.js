// expect: timeout
function setup() {
  createCanvas(600, 600, WEBGL);
  let i = 0;
  while (true) {
    i++;
  }
}
function draw() {
  brush.circle(300, 300, 120);
}
