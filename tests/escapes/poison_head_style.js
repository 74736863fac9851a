// Leaves a <style> in <head> that inverts every later canvas on this page.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  return {
    get then() {
      const d = noStroke().canvas.ownerDocument;
      const s = d.createElement("style");
      s.textContent = "canvas { filter: invert(1) !important; }";
      d.head.appendChild(s);
      return undefined;
    },
  };
}
