// profile: reference
// console.log while painting, with objects and numbers.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
  console.log("setup done", { size: width });
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#c1121f", 210);
  brush.circle(300, 300, 150);
  console.log("painted", frameCount);
}
