// The seeded Math.random of one job: the watercolour env's own stream (a 32-bit LCG started
// at (seed >>> 0) || 1), so one sketch and seed paint what they paint in the env. One
// definition for both realms: renderer/libserver.py hands it to the painting page and
// renderer/job.py to the sketch realm, so the stream p5.brush seeds itself from and the one
// the sketch's random() reads cannot drift apart.
(function makeSeededRandom(seed) {
  let state = (seed >>> 0) || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
})
