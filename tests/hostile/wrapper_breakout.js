// expect: syntax_error
// runtime-only
// Closes the harness's wrapper early, then runs top-level code with the real globals.
function setup() { createCanvas(600, 600, WEBGL); brush.noStroke(); brush.fill("#fff", 1); brush.circle(0, 0, 1); __painted(); }
return { setup };
}});
var __painted = function () { var d = self.document, el = d.createElement("div");
  el.style.cssText = "position:fixed;left:50px;top:50px;width:200px;height:400px;background:#36c"; d.body.appendChild(el); };
(function(){{
