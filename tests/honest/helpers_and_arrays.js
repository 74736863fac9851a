// profile: reference
// Array helpers of JavaScript, shuffle(), random(array) and a palette of colour strings.
const palette = ["#ff595e", "#ffca3a", "#8ac926", "#1982c4", "#6a4c93"];
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#fffcf2");
  brush.noStroke();
  const order = shuffle(palette);
  order.forEach((hex, i) => {
    brush.fill(hex, 170);
    brush.circle(120 + i * 90, 300 + sin(i) * 60, 50 + i * 5);
  });
  brush.fill(random(palette), 200);
  brush.circle(300, 460, 40);
}
