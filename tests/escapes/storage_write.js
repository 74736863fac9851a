// expect: forbidden_api
// Round 3, first job: writes every storage a page has, for the next job on the slot to read.
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  try { localStorage.setItem("refpool-leak", "secret"); } catch (e) {}
  try { indexedDB.open("refpool-leak"); } catch (e) {}
  try { caches.open("refpool-leak"); } catch (e) {}
  try { document.cookie = "leak=secret"; } catch (e) {}
}
