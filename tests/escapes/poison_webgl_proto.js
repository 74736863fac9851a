// Poisons the page for the next job: the old harness let this getter reach the real window.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  return {
    get then() {
      const w = noStroke().canvas.ownerDocument.defaultView;
      for (const C of [w.WebGL2RenderingContext, w.WebGLRenderingContext]) {
        for (const k of ["drawArrays", "drawElements", "clear"]) {
          Object.defineProperty(C.prototype, k, { value: function () {}, configurable: true, writable: true });
        }
      }
      return undefined;
    },
  };
}
