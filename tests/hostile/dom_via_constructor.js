// expect: forbidden_api
// runtime-only
// A DOM constructor that was not on the old deny-list leads back to the document.
function setup() {
  createCanvas(600, 600, WEBGL);
  brush.noStroke();
  brush.fill("#ffffff", 1);
  brush.circle(0, 0, 1);
  const d = new Text("").ownerDocument;
  const el = d.createElement("div");
  el.style.cssText = "position:fixed;left:100px;top:100px;width:300px;height:300px;background:#c03;border-radius:50%";
  d.body.appendChild(el);
}
