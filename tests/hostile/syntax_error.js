// expect: syntax_error
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  let x = ;
  brush.circle(300, 300, 120);
}
