// expect: tamper @5
// toString planted on Function.prototype through Reflect.defineProperty.
function setup() {
  createCanvas(600, 600, WEBGL);
  Reflect.defineProperty(Object.getPrototypeOf(() => 0), "toString", { value: () => "x", configurable: true, writable: true });
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(0, 0, 220);
}
