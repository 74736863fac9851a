// expect: tamper
// Round 3: a bind() planted on %AsyncFunction.prototype% received the p5 instance when p5
// bound its async _draw. In the sketch's realm there is no p5 to bind: nothing calls it, and
// the planting is the verdict (issue 35).
const AsyncFunctionProto = Object.getPrototypeOf(async function () {});
AsyncFunctionProto.bind = function (inst) {
  inst.fill("#1040c0");
  inst.rect(-300, -300, 600, 600);
  return Function.prototype.bind.apply(this, arguments);
};
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
}
