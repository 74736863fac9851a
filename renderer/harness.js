// refpool painting page: runs one job's sketch in its own Worker, then paints its calls.
//
// No sketch code ever runs on this page. The sketch runs in a dedicated Worker
// (renderer/sketch_worker.js: no DOM, no canvas, no network, no storage) that records the
// brush and p5 calls it makes. This page checks that list (known names, finite numbers,
// bounded sizes) and replays it on the real p5.brush inside p5's own setup/draw cycle, then
// reads the 600x600 canvas at density 1. Only Python (which knows the random API name in
// the URL hash) can start a job or learn that it is done.
(() => {
  "use strict";
  const API_NAME = decodeURIComponent(location.hash.slice(1));
  const acornParse = window.acorn.parse; // loaded just before this file

  // p5.brush seeds its own PRNG from Math.random when it loads: seed it per job
  // (makeSeededRandom comes from renderer/seeded_random.js, shared with the sketch realm).
  let seededRandom = makeSeededRandom(1);
  Math.random = () => seededRandom();

  let job = null;
  const late = [];

  // Phase marks for bench/profile_render.py (a few per frame: cheap, and never read by the job).
  const mark = (name) => performance.mark("rp:" + name);

  const violation = (code, message, line = null) => ({ code, message: String(message).slice(0, 500), line });

  const finish = (status, detail) => {
    if (!job || job.finished) return;
    job.finished = true;
    if (job.worker) job.worker.terminate();
    if (job.instance) job.instance._loop = false;
    if (status === "error" && job.violations.length === 0) {
      job.violations.push(violation("runtime_error", "the sketch stopped with an error that gave no reason"));
    }
    let png = null;
    if (status === "done") {
      mark("capture");
      const shot = capture();
      mark("captured");
      if (shot.violation) { job.violations.push(shot.violation); status = "error"; } else png = shot.png;
    }
    mark("answer " + status);
    job.resolve(JSON.stringify({
      status, detail: detail || null, violations: job.violations, paints: job.paints,
      frames: job.frames, canvas: job.canvas, console: job.console, png,
    }));
  };

  // The canvas's own pixels, at the size the page made it. Never a page screenshot.
  const capture = () => {
    const canvas = job.instance && job.instance.canvas;
    const { width, height } = job.spec;
    if (!canvas) return { violation: violation("no_webgl_canvas", job.spec.codes.no_webgl_canvas) };
    if (canvas.width !== width || canvas.height !== height) {
      return { violation: violation("canvas_size", `the canvas is ${canvas.width}x${canvas.height}, not ${width}x${height}: ${job.spec.codes.canvas_size}`) };
    }
    const gl = canvas.getContext("webgl2") || canvas.getContext("webgl");
    // The sketch's calls were the only work on this page: a lost context is their doing.
    if (!gl || gl.isContextLost()) return { violation: violation("crash", "the WebGL context was lost while painting the sketch's calls (far too much GPU work)") };
    return { png: canvas.toDataURL("image/png") };
  };

  // --- checking the worker's answer ---------------------------------------------------------
  // The worker is untrusted: whatever it sends is checked here before anything is painted.
  class Refused extends Error {}
  const refuse = (message) => { throw new Refused(message); };

  const decode = (value, depth, forP5) => {
    if (value === null || typeof value === "boolean") return value;
    if (typeof value === "number") return Number.isFinite(value) ? value : refuse("a number that is not finite");
    if (typeof value === "string") return value.length <= 2000 ? value : refuse("a string that is too long");
    if (depth > 4) refuse("values nested too deeply");
    if (Array.isArray(value)) {
      if (value.length > 20000) refuse("an array that is too long");
      return value.map((v) => decode(v, depth + 1, forP5));
    }
    if (typeof value !== "object") return refuse("a value of an unknown kind");
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === "$u") return undefined;
    if ("$c" in value) {
      const colour = job.colours.get(value.$c);
      return colour || refuse("a colour that was never made");
    }
    if ("$h" in value) {
      if (!job.shapes.has(value.$h)) refuse("a shape that was never made");
      const shape = job.shapes.get(value.$h);
      return value.part === undefined ? shape : Array.isArray(shape) ? shape[value.part] : refuse("a part of a shape that has none");
    }
    if ("$v" in value) {
      const [x, y, z] = decode(value.$v, depth + 1, forP5);
      return forP5 ? job.instance.createVector(x, y, z) : { x, y, z };
    }
    if ("$o" in value && keys.length === 1) {
      const inner = value.$o;
      if (typeof inner !== "object" || inner === null || Object.keys(inner).length > 64) refuse("an options object that is too big");
      const out = {};
      for (const k of Object.keys(inner)) out[k] = decode(inner[k], depth + 1, forP5);
      return out;
    }
    return refuse("an object of an unknown kind");
  };

  // A custom brush's tip (calls the sketch's tip function made on its surface) and a sampled
  // pressure curve: only with brush.add, only allowed tip methods, only numbers.
  const checkCustomBrush = (call, limits) => {
    if (call.op !== "brush" || call.name !== "add") refuse("a brush tip on a call that is not brush.add");
    if (call.tip !== undefined) {
      if (!Array.isArray(call.tip) || call.tip.length > limits.maxTipCalls) refuse("a malformed brush tip");
      for (const t of call.tip) {
        if (!t || typeof t.name !== "string" || !Array.isArray(t.args) || limits.tipMethods.indexOf(t.name) < 0) refuse("a brush tip call that is not allowed");
      }
    }
    if (call.pressure !== undefined) {
      const p = call.pressure;
      if (!p || (p.at !== "pressure" && p.at !== "curve") || !(p.samples instanceof Float64Array) || p.samples.length !== limits.pressureSamples) refuse("a malformed pressure curve");
      for (const v of p.samples) if (!Number.isFinite(v)) refuse("a pressure curve that is not finite");
    }
  };
  // The custom brush as the sketch defined it: its tip drawn again, call by call, on
  // p5.brush's own tip surface; its pressure curve read between the samples.
  const customBrushParams = (call, params) => {
    const out = { ...params };
    if (call.tip !== undefined) {
      out.tip = (surface) => {
        for (const t of call.tip) surface[t.name](...t.args.map((a) => decode(a, 0, true)));
      };
    }
    if (call.pressure !== undefined) {
      const { at, samples } = call.pressure;
      const n = samples.length - 1;
      const curve = (x) => {
        const at_ = Math.min(Math.max(x, 0), 1) * n;
        const i = Math.min(Math.floor(at_), n - 1);
        return samples[i] + (samples[i + 1] - samples[i]) * (at_ - i);
      };
      if (at === "pressure") out.pressure = curve;
      else out.pressure = { ...(params.pressure || {}), curve };
    }
    return out;
  };

  // Every frame's calls checked up front: a bad list paints nothing at all.
  const check = (answer) => {
    const { limits } = job.spec;
    const frames = answer && answer.frames;
    if (!Array.isArray(frames) || frames.length < 1 || frames.length > limits.maxFrames + 1) refuse("a frame list of the wrong length");
    let count = 0;
    for (const frame of frames) {
      if (!Array.isArray(frame)) refuse("a frame that is not a list");
      count += frame.length;
      if (count > limits.maxCalls) refuse("more calls than allowed");
      for (const call of frame) {
        if (!call || typeof call !== "object" || typeof call.name !== "string" || !Array.isArray(call.args)) refuse("a malformed call");
        if (call.line !== null && !Number.isInteger(call.line)) refuse("a malformed line number");
        if (call.grid !== undefined) {
          // A field the sketch's function computed in its realm: a grid of angles, nothing else.
          if (!(call.grid instanceof Float32Array) || call.grid.length !== fieldCells() || typeof call.fieldName !== "string") refuse("a malformed field grid");
        }
        if (call.tip !== undefined || call.pressure !== undefined) checkCustomBrush(call, limits);
        const names = limits.names[call.op];
        if (!names || names.indexOf(call.name) < 0) refuse(`a call to ${String(call.op)} ${call.name} that is not allowed`);
      }
    }
    return frames;
  };

  // --- replaying, inside p5's own setup/draw -----------------------------------------------
  const replayCall = (inst, call) => {
    const args = () => call.args.map((a) => decode(a, 0, call.op !== "brush" && call.op !== "geometry"));
    switch (call.op) {
      case "canvas":
        inst.createCanvas(job.spec.width, job.spec.height, inst.WEBGL);
        inst.pixelDensity(1);
        job.canvas = true;
        return;
      case "p5":
        inst[call.name](...args());
        return;
      case "color": {
        if (typeof call.id !== "number" || job.colours.has(call.id)) refuse("a colour made twice");
        job.colours.set(call.id, inst[call.name](...args()));
        return;
      }
      case "colour": {
        const colour = decode(call.target, 0, true);
        if (!(colour instanceof window.p5.Color)) refuse("a colour method on something else");
        colour[call.name](...args());
        return;
      }
      case "brush": {
        if (call.name === "addField") {
          // The field function ran in the sketch's realm; p5.brush gets one that hands over
          // the grid that realm computed for each time p5.brush asks for it.
          const [name, options] = args();
          window.brush.addField(name, (_t, field) => fillField(field, name), options);
          return;
        }
        if (call.grid !== undefined) {
          if (!job.fieldGrids.has(call.fieldName)) job.fieldGrids.set(call.fieldName, []);
          job.fieldGrids.get(call.fieldName).push(call.grid);
        }
        const given = args();
        if (call.tip !== undefined || call.pressure !== undefined) given[1] = customBrushParams(call, given[1]);
        const result = window.brush[call.name](...given);
        if (job.spec.limits.paintingCalls.indexOf(call.name) >= 0) job.paints++;
        if (call.id !== undefined) {
          if (typeof call.id !== "number" || job.shapes.has(call.id)) refuse("a shape made twice");
          job.shapes.set(call.id, result);
        }
        return;
      }
      case "geometry": {
        const shape = decode(call.target, 0, false);
        if (!shape || typeof shape[call.name] !== "function") refuse(`.${call.name}() on something that is not a shape`);
        shape[call.name](...args());
        return;
      }
      default:
        refuse("an unknown kind of call");
    }
  };

  // p5.brush's field grid: 2x the canvas each way, a cell every 1% of its width.
  const fieldCells = () => {
    const { width, height } = job.spec, step = width * 0.01;
    return Math.round((2 * width) / step) * Math.round((2 * height) / step);
  };
  const fillField = (field, name) => {
    const queue = job.fieldGrids.get(name);
    const grid = queue && queue.shift();
    if (!grid) return field;
    const rows = field[0].length;
    for (let c = 0; c < field.length; c++) for (let r = 0; r < rows; r++) field[c][r] = grid[c * rows + r];
    return field;
  };

  const replayFrame = (index) => {
    if (!job || job.finished) return;
    const inst = job.instance;
    for (const call of job.calls[index]) {
      // Replaying a checked call list is the renderer's work, not the sketch's: running past
      // its budget means a busy machine or a stalled GPU process, so it is an infra outcome.
      if (performance.now() > job.replayDeadlineAt) { finish("infra", "replaying the sketch's checked calls ran past the renderer's budget (a busy machine or a stalled GPU process)"); return; }
      try {
        replayCall(inst, call);
      } catch (err) {
        // The sketch's call failed in p5 or p5.brush: its error, at its line, never "infra".
        const what = call.op === "geometry" ? `.${call.name}()` : call.op === "brush" ? `brush.${call.name}()` : `${call.name}()`;
        if (err instanceof Refused) job.violations.push(violation("tamper", `${job.spec.codes.tamper} (the sketch's calls held ${err.message})`, call.line));
        else job.violations.push(violation("runtime_error", `${what} failed: ${err && err.message ? err.message : String(err)}`, call.line));
        finish("error");
        return;
      }
    }
  };

  // Recorded frames are replayed back to back, not at p5's 60 fps: nothing here is timed
  // (the worker already ran the sketch's clock), so waiting for animation frames would only
  // add up to 16 ms a frame. A message, unlike a timer, is never clamped to 4 ms.
  const nextFrame = new MessageChannel();
  nextFrame.port1.onmessage = () => {
    if (job && !job.finished && job.instance) job.instance.redraw();
  };

  // p5 add-on registered after p5.brush: its hooks run once brush has flushed each frame.
  const doneAddon = (p5, fn, lifecycles) => {
    lifecycles.postsetup = function () {
      mark("setup flushed");
      this._loop = false; // p5 still draws frame 1 right after setup; the rest come from postdraw
      if (job.calls.length === 1) setTimeout(() => finish("done"), 0);
    };
    lifecycles.postdraw = function () {
      mark(`draw ${job.drawn} flushed`);
      job.frames = job.drawn;
      // Both run after this frame's microtasks (p5's finishDraw).
      if (job.drawn >= job.calls.length - 1) setTimeout(() => finish("done"), 0);
      else nextFrame.port2.postMessage(0);
    };
  };

  const loadScript = (src) => new Promise((resolve, reject) => {
    const el = document.createElement("script");
    el.src = src;
    el.onload = () => resolve(el);
    el.onerror = () => reject(new Error("could not load " + src));
    document.head.appendChild(el);
  });

  const paint = async (calls) => {
    job.calls = calls;
    job.replayDeadlineAt = performance.now() + job.spec.replayMs;
    console.debug(job.spec.phaseToken); // the sketch's realm is done: what follows is ours
    seededRandom = makeSeededRandom(job.spec.seed);
    (await loadScript("/lib/p5.brush.js")).remove();
    mark("brush loaded");
    window.p5.registerAddon(doneAddon);
    window.setup = () => { mark("setup"); replayFrame(0); mark("setup replayed"); };
    if (calls.length > 1) {
      window.draw = () => {
        job.drawn++;
        mark(`draw ${job.drawn}`);
        replayFrame(job.drawn);
        mark(`draw ${job.drawn} replayed`);
      };
    }
    job.instance = new window.p5();
    mark("p5 made");
  };

  // --- the sketch's own realm ----------------------------------------------------------------
  const runWorker = (spec) => new Promise((resolve) => {
    let worker;
    try {
      worker = new Worker(spec.workerUrl);
    } catch (err) {
      resolve({ infra: `could not start the sketch's worker: ${err && err.message}` });
      return;
    }
    job.worker = worker;
    const timer = setTimeout(() => resolve({ timeout: true }), spec.deadlineMs);
    worker.onmessage = (event) => {
      // An attempt, posted the moment the realm recorded it: kept whatever the run does next.
      const data = event.data;
      if (data && data.status === "attempt") { if (job.attempts.length < 50) job.attempts.push(data.violation); return; }
      clearTimeout(timer);
      resolve({ answer: data });
    };
    worker.onerror = (event) => {
      // A syntax error in the script, or an error thrown where no frame caught it.
      event.preventDefault();
      clearTimeout(timer);
      const line = event.lineno ? event.lineno - spec.prefixLines : null;
      const isSyntax = /SyntaxError/.test(event.message || "");
      resolve({ thrown: violation(isSyntax ? "syntax_error" : "runtime_error", event.message || "the sketch's script failed", line > 0 ? line : null) });
    };
  });

  const run = async (spec) => {
    let resolveJob;
    const answered = new Promise((r) => { resolveJob = r; });
    job = {
      spec, replayDeadlineAt: Infinity, violations: [], console: [], paints: 0, frames: 0, drawn: 0, canvas: false, finished: false,
      resolve: resolveJob, worker: null, instance: null, calls: [], colours: new Map(), shapes: new Map(), attempts: [], fieldGrids: new Map(),
    };
    mark("run");
    // The sketch must parse on its own: then it cannot close the function it is wrapped in.
    try {
      acornParse(spec.source, { ecmaVersion: "latest", sourceType: "script" });
    } catch (err) {
      const loc = err && err.loc;
      job.violations.push(violation("syntax_error",
        `SyntaxError: ${String(err && err.message).replace(/ \(\d+:\d+\)$/, "")}` + (loc ? ` (line ${loc.line}, column ${loc.column + 1})` : ""),
        loc ? loc.line : null));
      finish("error");
      return answered;
    }
    mark("parsed");
    const got = await runWorker(spec);
    mark("worker answered");
    if (job.worker) job.worker.terminate(); // nothing the sketch left running outlives its answer
    if (got.infra) { finish("infra", got.infra); return answered; }
    if (job.attempts.length) {
      if (got.answer && Array.isArray(got.answer.console)) job.console = got.answer.console.slice(0, 50).map((line) => String(line).slice(0, 500));
      // What the sketch attempted is its verdict, however its run ended (a timeout included):
      // the same program and seed get the same verdict at any load.
      for (const v of job.attempts) {
        const code = v && spec.codes[v.code] ? v.code : "tamper";
        job.violations.push(violation(code, v && typeof v.message === "string" ? v.message : spec.codes[code], v && Number.isInteger(v.line) ? v.line : null));
      }
      finish("error");
      return answered;
    }
    if (got.timeout) { finish("timeout"); return answered; }
    if (got.thrown) { job.violations.push(got.thrown); finish("error"); return answered; }
    const answer = got.answer;
    if (answer && answer.status === "infra") { finish("infra", String(answer.detail).slice(0, 200)); return answered; }
    let calls;
    try {
      if (!answer || (answer.status !== "done" && answer.status !== "error")) refuse("an answer of an unknown kind");
      if (Array.isArray(answer.console)) job.console = answer.console.slice(0, 50).map((line) => String(line).slice(0, 500));
      if (answer.status === "error") {
        const found = Array.isArray(answer.violations) ? answer.violations.slice(0, 50) : [];
        for (const v of found) {
          const code = v && spec.codes[v.code] ? v.code : "runtime_error";
          job.violations.push(violation(code, v && typeof v.message === "string" ? v.message : spec.codes[code], v && Number.isInteger(v.line) ? v.line : null));
        }
        finish("error");
        return answered;
      }
      calls = check(answer);
    } catch (err) {
      job.violations.push(violation("tamper", `${spec.codes.tamper} (the sketch's worker sent ${err.message})`));
      finish("error");
      return answered;
    }
    mark("checked");
    if (!answer.canvas) { finish("done"); return answered; } // no canvas: nothing to paint
    try {
      await paint(calls);
    } catch (err) {
      job.violations.push(violation("runtime_error", `painting the sketch's calls failed: ${err && err.message}`));
      finish("error");
    }
    return answered;
  };

  // Errors p5 or p5.brush raise outside a replayed call (in a lifecycle hook) are the
  // sketch's: they come from the calls it made.
  window.addEventListener("error", (event) => {
    if (!job || job.finished || !job.instance) return;
    job.violations.push(violation("runtime_error", `p5.brush failed while painting the sketch's calls: ${event.message}`));
    finish("error");
  });
  window.addEventListener("unhandledrejection", (event) => {
    if (!job || job.finished || !job.instance) return;
    const reason = event.reason;
    job.violations.push(violation("runtime_error", `p5.brush failed while painting the sketch's calls: ${reason && reason.message ? reason.message : String(reason)}`));
    finish("error");
  });
  document.addEventListener("securitypolicyviolation", (event) => {
    late.push(violation("forbidden_api", `blocked by the page's security policy (${event.effectiveDirective}): ${job ? job.spec.codes.forbidden_api : ""}`));
  });

  // Health check: a tiny WebGL draw and read-back proves the GPU process answers.
  const ping = () => {
    const c = document.createElement("canvas");
    c.width = 4; c.height = 4;
    const gl = c.getContext("webgl2");
    if (!gl) return "no webgl2";
    gl.clearColor(1, 0, 0, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    const px = new Uint8Array(4);
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
    const ext = gl.getExtension("WEBGL_lose_context");
    if (ext) ext.loseContext();
    return px[0] === 255 ? "ok" : "bad pixel";
  };

  // p5's function names and constants, learned once per browser: the sketch realm's facade
  // reports every p5 function it does not offer with the gate's code for it.
  const p5Facts = () => {
    const proto = window.p5.prototype;
    const functions = [];
    const constants = {};
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name[0] === "_" || name === "constructor") continue;
      const desc = Object.getOwnPropertyDescriptor(proto, name);
      if (desc && typeof desc.value === "function") functions.push(name);
      else if (desc && /^[A-Z][A-Z0-9_]*$/.test(name) && ["number", "string"].includes(typeof desc.value)) constants[name] = desc.value;
    }
    // The page's own globals (DOM constructors, RTCPeerConnection, storage...): the realm
    // reports a sketch that names one, rather than leaving it a bare ReferenceError.
    const names = new Set();
    for (let o = window; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
      for (const n of Object.getOwnPropertyNames(o)) if (/^[A-Za-z_$][\w$]*$/.test(n) && !(n in proto)) names.add(n);
    }
    names.delete(API_NAME);
    return { functions, constants, globals: [...names] };
  };

  Object.defineProperty(window, API_NAME, {
    value: Object.freeze({ run, ping, p5Facts, late: () => JSON.stringify(late.splice(0)) }),
    configurable: false, writable: false, enumerable: false,
  });
})();
