// The seeded Math.random of one job (mulberry32). One definition for both realms:
// renderer/libserver.py hands it to the painting page and renderer/job.py to the sketch realm,
// so the stream p5.brush seeds itself from and the one the sketch's random() reads cannot
// drift apart.
(function makeSeededRandom(seed) {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})
