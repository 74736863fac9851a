// expect: forbidden_api
// Round 3, second job: paints a big square when it finds what the previous job left.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  let found = false;
  try { found = localStorage.getItem("refpool-leak") === "secret"; } catch (e) {}
  try { found = found || /leak=secret/.test(document.cookie); } catch (e) {}
  if (found) { brush.fill("#1040c0", 255); brush.rect(0, 0, 600, 600); }
}
