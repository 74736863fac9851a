// Loses the page's WebGL context for good, and a busy loop that fires later.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  return {
    get then() {
      const p = noStroke();
      const w = p.canvas.ownerDocument.defaultView;
      const gl = p.drawingContext;
      w.setTimeout(() => { const ext = gl.getExtension("WEBGL_lose_context"); if (ext) ext.loseContext(); }, 30);
      w.setTimeout(() => { const end = Date.now() + 25000; while (Date.now() < end) {} }, 400);
      return undefined;
    },
  };
}
