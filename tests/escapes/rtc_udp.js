// expect: forbidden_api
// Round 3: an RTCPeerConnection with a STUN server on a loopback port sent UDP packets out
// (PORT is filled in by the test, which listens there).
function setup() { createCanvas(600, 600, WEBGL); noLoop(); }
function draw() {
  translate(-width / 2, -height / 2);
  background("#f6efe2");
  brush.noStroke();
  brush.fill("#e2583e", 200);
  brush.circle(300, 300, 60);
  const pc = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:PORT" }] });
  pc.createDataChannel("x");
  pc.createOffer().then((offer) => pc.setLocalDescription(offer));
}
