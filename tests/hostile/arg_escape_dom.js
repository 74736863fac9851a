// expect: defused<0.05
// runtime-only
// The same route, reaching for the DOM through p5's select() to add CSS text.
function setup() {
  createCanvas(600, 600, WEBGL);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  let fired = 0;
  const x = [300];
  x[Symbol.toPrimitive] = function () {
    if (!fired) {
      fired = 1;
      const d = selec\u0074("canvas").elt.ownerDocument;
      const st = d.createElement("style");
      st.textContent = "body::after{content:'HELLO';position:fixed;left:40px;top:40px;font:bold 120px sans-serif;color:#0a3}";
      d.head.appendChild(st);
    }
    return 300;
  };
  brush.circle(x, 300, 120);
}
