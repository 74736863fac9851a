// refpool render harness: runs one untrusted p5.brush sketch at a time in a page kept alive.
//
// Loaded before p5. The sketch runs inside a strict-mode factory whose parameters shadow
// every dangerous global, and every p5 / brush entry point is wrapped, so the gate's rules
// hold at run time whatever the source text looks like. Only Python (which knows the random
// API name in the URL hash) can start a job or learn that it is done.
(() => {
  "use strict";
  // Intrinsics captured before any untrusted code can tamper with them.
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const getOwnPropertyNames = Object.getOwnPropertyNames;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const isArray = Array.isArray;
  const ProxyCtor = Proxy;
  const PromiseCtor = Promise;
  const setTimeoutOrig = setTimeout.bind(window);
  const createElementOrig = Document.prototype.createElement;
  const appendChildOrig = Node.prototype.appendChild;
  const removeChildOrig = Node.prototype.removeChild;
  const stringSlice = String.prototype.slice;
  const stringify = JSON.stringify;
  const acornParse = window.acorn.parse; // loaded just before this file

  // Globals a sketch may see: JavaScript's own. p5's are added per job (p5.prototype names).
  const INTRINSICS = new Set([
    "Object", "Function", "Array", "Number", "parseFloat", "parseInt", "Infinity", "NaN",
    "undefined", "Boolean", "String", "Symbol", "Date", "RegExp", "Error", "AggregateError",
    "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError",
    "JSON", "Math", "Intl", "ArrayBuffer", "Uint8Array", "Int8Array", "Uint16Array",
    "Int16Array", "Uint32Array", "Int32Array", "Float32Array", "Float64Array",
    "Uint8ClampedArray", "BigUint64Array", "BigInt64Array", "DataView", "Map", "BigInt", "Set",
    "WeakMap", "WeakSet", "Proxy", "Reflect", "decodeURI", "decodeURIComponent", "encodeURI",
    "encodeURIComponent", "escape", "unescape", "isFinite", "isNaN", "console", "Iterator",
    "WeakRef", "FinalizationRegistry", "Atomics", "SharedArrayBuffer", "Float16Array",
  ]);
  // Names that cannot be strict-mode parameters.
  const UNUSABLE = new Set(["eval", "arguments", "let", "static", "yield", "implements",
    "interface", "package", "private", "protected", "public", "await", "brush"]);

  const API_NAME = decodeURIComponent(location.hash.slice(1));

  // --- seeded Math.random (p5.brush seeds its own PRNG from it when it loads) -------------
  let prngState = 1;
  const seededRandom = () => {
    prngState = (prngState + 0x6d2b79f5) | 0;
    let t = Math.imul(prngState ^ (prngState >>> 15), 1 | prngState);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  defineProperty(Math, "random", { value: seededRandom, writable: false, configurable: false });

  // --- per-job state --------------------------------------------------------------------
  const USER = 1; // synchronously inside the sketch's own code
  const API = 2; // inside a permitted brush call or a p5.brush lifecycle hook
  const OTHER = 0; // p5 internals, harness, or code the sketch scheduled to run later
  let mode = OTHER;
  let job = null;

  class Tripped extends Error {}

  const violate = (code, message) => {
    if (job && !job.finished) {
      const v = { code, message, line: userLine(new Error().stack) };
      job.violations[job.violations.length] = v;
    }
    throw new Tripped(message);
  };

  // Line of the innermost stack frame inside the sketch's own script.
  const userLine = (stack) => {
    if (!job || typeof stack !== "string") return null;
    const marker = job.scriptUrl + ":";
    let at = stack.indexOf(marker);
    if (at < 0) return null;
    at += marker.length;
    let n = 0;
    while (at < stack.length && stack.charCodeAt(at) >= 48 && stack.charCodeAt(at) <= 57) {
      n = n * 10 + stack.charCodeAt(at) - 48;
      at++;
    }
    const line = n - job.prefixLines;
    return line > 0 ? line : null;
  };

  // Only p5's own canvas (in the <main> p5 wraps it in) may be on the page when a render is
  // captured. Shadowed globals already keep sketches away from the DOM; this is a backstop.
  const pageIsClean = () => {
    const inst = job.instance;
    const visible = (el) => {
      const style = getComputedStyle(el);
      return style.display !== "none" && style.visibility !== "hidden";
    };
    const kids = document.body ? document.body.children : [];
    for (let i = 0; i < kids.length; i++) {
      const el = kids[i];
      if (el.tagName === "MAIN") {
        for (const inner of el.querySelectorAll("*")) {
          if (inst && inner === inst.canvas) continue;
          if (inner.tagName !== "CANVAS" || visible(inner)) return false;
        }
      } else if (!(inst && el === inst.canvas) && (el.tagName !== "CANVAS" || visible(el))) {
        return false;
      }
    }
    return true;
  };

  const finish = (status, detail) => {
    if (!job || job.finished) return;
    if (status === "done" && !pageIsClean()) {
      job.violations[job.violations.length] = {
        code: "forbidden_api", line: null,
        message: "the page was changed outside the canvas (DOM or CSS): " + config.codes.forbidden_api,
      };
      status = "error";
    }
    job.finished = true;
    const inst = job.instance;
    if (inst) inst._loop = false;
    // A string, built with captured intrinsics: nothing the sketch patched can garble it.
    job.resolve(stringify({ status, detail: detail || null, violations: job.violations,
                            paints: job.paints, frames: job.frames, canvas: job.canvas }));
  };

  const fail = (err) => {
    if (!job || job.finished) return;
    if (err && err.name === "EvalError") {
      job.violations[job.violations.length] = {
        code: "forbidden_api", message: "eval and new Function are not allowed: " + config.codes.forbidden_api,
        line: userLine(err.stack),
      };
    } else if (!(err instanceof Tripped)) {
      const text = err && err.message ? String(err.message) : String(err);
      const name = err && err.name ? err.name + ": " : "";
      job.violations[job.violations.length] = {
        code: "runtime_error", message: name + text, line: userLine(err && err.stack),
      };
    }
    finish("error");
  };

  // --- argument hygiene: only fresh, plain data crosses into p5 or brush -------------------
  // Arguments are copied while still in the sketch's mode: a getter, Symbol.toPrimitive or a
  // Proxy inside a sketch's array would otherwise run inside p5/brush, unguarded. Sketches
  // never hold real p5 objects either: a colour is an opaque handle, a vector plain {x, y, z}.
  let colourFromCss = null; // p5's original color(), captured before guarding
  let vectorFrom = null; // p5's original createVector()
  let colourToCss = null; // p5.Color.prototype.toString, captured at load
  const colourHandles = new WeakMap(); // handle -> CSS rgba() string

  const isPrimitive = (v) => v === null || (typeof v !== "object" && typeof v !== "function");
  const copyValue = (value, depth, name, forBrush, inst) => {
    if (isPrimitive(value)) {
      if (typeof value === "symbol" || typeof value === "bigint") violate("bad_argument", `${name}() takes numbers, colour strings or arrays`);
      return value;
    }
    const bad = (why) => violate("bad_argument", `${name}() ${why}; pass numbers, colour strings or arrays of them`);
    if (colourHandles.has(value)) {
      const css = colourHandles.get(value);
      return forBrush ? css : apply(colourFromCss, inst, [css]);
    }
    if (isArray(value)) {
      if (depth >= 3) bad("was given arrays nested too deeply");
      const length = getOwnPropertyDescriptor(value, "length").value;
      if (!(length <= 100000)) bad("was given a huge array");
      const out = [];
      for (let i = 0; i < length; i++) {
        const d = getOwnPropertyDescriptor(value, i);
        if (d && !("value" in d)) bad("was given an array with a getter in it");
        out[i] = copyValue(d ? d.value : undefined, depth + 1, name, forBrush, inst);
      }
      return out;
    }
    if (!forBrush && inst && typeof value === "object" && !ProxyCheck(value)) {
      const xyz = [0, 0, 0];
      let found = 0;
      ["x", "y", "z"].forEach((k, i) => {
        const d = getOwnPropertyDescriptor(value, k);
        if (d && "value" in d && typeof d.value === "number") { xyz[i] = d.value; found++; }
      });
      if (found >= 2) return apply(vectorFrom, inst, xyz); // a vector-like {x, y[, z]}
    }
    return bad("was given an object or function");
  };
  // Proxies cannot be told apart from objects; a plain vector-like object must have an
  // ordinary prototype, which reading it through a Proxy's trap would not prove, so only
  // objects whose prototype is Object.prototype or null qualify.
  const ObjectProto = Object.prototype;
  const ProxyCheck = (value) => {
    const proto = Object.getPrototypeOf(value);
    return proto !== ObjectProto && proto !== null;
  };
  const copyArgs = (args, name, forBrush, inst) => {
    const out = [];
    for (let i = 0; i < args.length; i++) out[i] = copyValue(args[i], 0, name, forBrush, inst);
    return out;
  };
  // What the sketch may receive back: data, colour handles and vector copies, never internals.
  const sanitise = (value, depth = 0) => {
    if (isPrimitive(value)) return value;
    const P5 = window.p5;
    if (isArray(value) && depth < 3) {
      const out = [];
      for (let i = 0; i < value.length; i++) out[i] = sanitise(value[i], depth + 1);
      return out;
    }
    if (P5 && value instanceof P5.Color) {
      const css = apply(colourToCss, value, ["rgba"]);
      const text = () => css;
      const handle = Object.freeze(Object.create(null, {
        toString: { value: text }, valueOf: { value: text }, [Symbol.toPrimitive]: { value: text },
      }));
      colourHandles.set(handle, css);
      return handle;
    }
    if (P5 && value instanceof P5.Vector) return { x: value.x, y: value.y, z: value.z };
    return undefined;
  };

  // --- p5 prototype guard ------------------------------------------------------------------
  let pristineProto = null; // descriptors of p5.prototype before any job touched it
  let pristineHooks = null;
  let config = null; // {helpers, primitives, brushMethods, paintingCalls, width, height, maxFrames}

  const categorise = (name) => {
    if (config.helpers[name]) return "helper";
    if (name === "text" || stringSlice.call(name, 0, 4) === "text" || name === "loadFont") return "text";
    if (config.primitives[name]) return "p5_primitive";
    if (name === "loadPixels" || name === "updatePixels" || name === "set" || name === "get" || name === "copy" || name === "blend") return "pixel_write";
    if (name === "createGraphics" || name === "createFramebuffer" || name === "createShader" || name === "shader" ||
        name === "loadShader" || name === "filter" || name === "createFilterShader" || name === "buildGeometry" ||
        name === "createImage" || name === "beginGeometry" || stringSlice.call(name, -6) === "Shader") return "offscreen_buffer";
    if (name === "resizeCanvas" || name === "pixelDensity") return "canvas_size";
    if (stringSlice.call(name, 0, 4) === "load" || stringSlice.call(name, 0, 4) === "save" ||
        stringSlice.call(name, 0, 4) === "http" || stringSlice.call(name, 0, 6) === "select" ||
        stringSlice.call(name, 0, 6) === "create" || name === "getURL" || name === "getURLPath" ||
        name === "getURLParams" || name === "remove" || name === "cursor" || name === "fullscreen") return "forbidden_api";
    return "p5_forbidden";
  };

  const guardP5 = () => {
    const proto = window.p5.prototype;
    for (const name of getOwnPropertyNames(proto)) {
      if (name === "constructor" || name[0] === "_") continue;
      const desc = getOwnPropertyDescriptor(proto, name);
      if (!desc || typeof desc.value !== "function") continue;
      const original = desc.value;
      if (name === "color") colourFromCss = original;
      if (name === "createVector") vectorFrom = original;
      const category = categorise(name);
      const painting = category === "p5_primitive" || category === "text" || category === "pixel_write" || category === "offscreen_buffer";
      let guarded;
      if (name === "createCanvas") {
        guarded = function (w, h, kind) {
          if (mode === USER) {
            if (kind !== this.WEBGL) violate("no_webgl_canvas", "createCanvas needs WEBGL as its third argument: createCanvas(" + config.width + ", " + config.height + ", WEBGL)");
            if (w !== config.width || h !== config.height) violate("canvas_size", `the canvas must be ${config.width}x${config.height}; got ${w}x${h}`);
            const prev = mode;
            mode = API;
            try {
              apply(original, this, [config.width, config.height, kind]);
              apply(proto.pixelDensity, this, [1]);
            } finally { mode = prev; }
            job.canvas = { width: config.width, height: config.height, webgl: true };
            return undefined;
          }
          return apply(original, this, arguments);
        };
      } else {
        guarded = function () {
          if (mode === USER) {
            if (category !== "helper") violate(category, `${name}() is not allowed: ` + config.codes[category]);
            const safe = copyArgs(arguments, name, false, this);
            const prev = mode;
            mode = API;
            try { return sanitise(apply(original, this, safe)); } finally { mode = prev; }
          }
          // Painting from anywhere but inside brush (e.g. a promise callback) is a violation.
          // Also after the frame is done: nothing may paint between "done" and the capture.
          if (painting && mode !== API) violate(category, `${name}() was called outside the brush API`);
          return apply(original, this, arguments);
        };
      }
      defineProperty(proto, name, { value: guarded, writable: true, configurable: true, enumerable: desc.enumerable });
    }
  };

  // --- the brush object the sketch sees -----------------------------------------------
  const makeBrush = () => {
    const real = window.brush;
    const allowed = {};
    const exposed = {};
    for (const name of config.brushMethods) {
      const original = real[name];
      if (typeof original !== "function") continue;
      const painting = !!config.paintingCalls[name];
      allowed[name] = function () {
        if (mode !== USER) violate("async_sketch", `brush.${name}() was called from a callback, timer or promise; draw everything synchronously in setup() or draw()`);
        const safe = copyArgs(arguments, "brush." + name, true, job.instance);
        if (painting) job.paints++;
        mode = API;
        try { apply(original, real, safe); } finally { mode = USER; }
        return undefined; // never hand internals (plots, polygons) to the sketch
      };
    }
    const known = getOwnPropertyNames(real);
    return new ProxyCtor(exposed, {
      get(_t, prop) {
        if (typeof prop !== "string") return undefined;
        if (allowed[prop]) return allowed[prop];
        const isKnown = known.indexOf(prop) >= 0;
        return function () {
          violate("unknown_brush_method", isKnown
            ? `brush.${prop}() is not on this profile's allowlist (${config.brushMethods.join(", ")})`
            : `brush.${prop}() does not exist in p5.brush; allowed: ${config.brushMethods.join(", ")}`);
        };
      },
      set() { violate("forbidden_api", "the brush object is read-only"); },
      defineProperty() { violate("forbidden_api", "the brush object is read-only"); },
    });
  };

  // Stand-in for a forbidden global: any use records a violation and throws.
  const tripwire = (name, code) => new ProxyCtor(function () {}, {
    get() { violate(code, `${name} is not available to sketches: ` + config.codes[code]); },
    set() { violate(code, `${name} is not available to sketches: ` + config.codes[code]); },
    apply() { violate(code, `${name}() is not available to sketches: ` + config.codes[code]); },
    construct() { violate(code, `new ${name}() is not available to sketches: ` + config.codes[code]); },
  });

  // --- loading scripts (the libraries are cached by the loopback server) -----------------
  const loadScript = (src) => new PromiseCtor((resolve, reject) => {
    const el = apply(createElementOrig, document, ["script"]);
    el.src = src;
    el.onload = () => resolve(el);
    el.onerror = () => reject(new Error("could not load " + src));
    apply(appendChildOrig, document.head, [el]);
  });

  let sketchFactory = null;
  let lastScript = null;

  // Syntax errors in the sketch's script and errors thrown outside our wrappers.
  window.addEventListener("error", (event) => {
    if (!job || job.finished) return;
    if (event.filename && event.filename.indexOf("/job/") >= 0) {
      const line = event.lineno - job.prefixLines;
      const isSyntax = /SyntaxError/.test(event.message || "");
      job.violations[job.violations.length] = {
        code: isSyntax ? "syntax_error" : "runtime_error",
        message: `${event.message} (line ${line}, column ${event.colno})`, line: line > 0 ? line : null,
      };
      job.scriptError = true;
      if (!isSyntax) finish("error");
    } else if (!(event.error instanceof Tripped)) {
      fail(event.error || event.message);
    } else {
      finish("error");
    }
  });
  window.addEventListener("unhandledrejection", (event) => { fail(event.reason); });
  // The CSP blocked something (eval, a request, an image): the sketch tried to get out.
  document.addEventListener("securitypolicyviolation", (event) => {
    if (!job || job.finished) return;
    job.violations[job.violations.length] = {
      code: "forbidden_api", line: null,
      message: `blocked by the page's security policy (${event.effectiveDirective}` +
        (event.blockedURI ? ` ${event.blockedURI}` : "") + "): " + config.codes.forbidden_api,
    };
  });

  // p5 add-on registered after p5.brush: its hooks run once brush has flushed.
  const doneAddon = (p5, fn, lifecycles) => {
    lifecycles.presetup = function () {
      if (this !== job.instance) return;
      this.randomSeed(job.seed);
      this.noiseSeed(job.seed);
    };
    lifecycles.postsetup = function () {
      if (this !== job.instance) return;
      if (!job.hasDraw) setTimeoutOrig(() => finish("done"), 0);
    };
    lifecycles.postdraw = function () {
      if (this !== job.instance) return;
      job.frames = this.frameCount;
      if (!this._loop || this.frameCount >= config.maxFrames) {
        this._loop = false;
        // After this frame's microtasks (p5's finishDraw) have run.
        setTimeoutOrig(() => finish("done"), 0);
      }
    };
  };

  const releaseCanvas = () => {
    for (const canvas of document.querySelectorAll("canvas")) {
      try {
        const gl = canvas.getContext("webgl2") || canvas.getContext("webgl");
        const ext = gl && gl.getExtension("WEBGL_lose_context");
        if (ext) ext.loseContext();
      } catch (_e) { /* a 2D canvas: nothing to release */ }
      if (canvas.parentNode) apply(removeChildOrig, canvas.parentNode, [canvas]);
    }
  };

  // Put p5 back the way it was before the previous job (p5.brush 2.2.2 has no reset).
  const resetP5 = async () => {
    const p5 = window.p5;
    const inst = p5.instance;
    if (inst) {
      // Stop the old instance for good: p5 checks this flag between every lifecycle step,
      // so its pending setup/draw can never run the next job's functions.
      inst.hitCriticalError = true;
      inst._loop = false;
      try { await inst.remove(); } catch (_e) { /* a broken sketch may leave it half-built */ }
    }
    releaseCanvas();
    for (const name of getOwnPropertyNames(p5.prototype)) {
      if (!pristineProto[name]) delete p5.prototype[name];
    }
    for (const name in pristineProto) defineProperty(p5.prototype, name, pristineProto[name]);
    for (const hook in pristineHooks) p5.lifecycleHooks[hook].length = pristineHooks[hook];
    p5.instance = null;
    delete window.setup;
    delete window.draw;
    delete window.brush;
    if (lastScript) { lastScript.remove(); lastScript = null; }
  };

  // Tripwires for the sketch factory's parameters, in order; set once per page by Python.
  let shadowArgs = [];
  const configure = (shadowed) => {
    const made = [];
    for (const [name, code] of shadowed) made[made.length] = tripwire(name, code);
    shadowArgs = made;
    return made.length;
  };

  const run = async (spec) => {
    config = spec.config;
    let resolveJob;
    const finished = new PromiseCtor((r) => { resolveJob = r; });
    job = {
      seed: spec.seed, violations: [], paints: 0, frames: 0, canvas: null, finished: false,
      resolve: resolveJob, scriptUrl: spec.scriptUrl, prefixLines: spec.prefixLines, hasDraw: false,
    };
    try {
      // The sketch must parse on its own: then it cannot close the factory we wrap it in.
      try {
        acornParse(spec.source, { ecmaVersion: "latest", sourceType: "script" });
      } catch (err) {
        const loc = err && err.loc;
        job.violations[job.violations.length] = {
          code: "syntax_error", line: loc ? loc.line : null,
          message: `SyntaxError: ${String(err && err.message).replace(/ \(\d+:\d+\)$/, "")}` +
            (loc ? ` (line ${loc.line}, column ${loc.column + 1})` : ""),
        };
        finish("error");
        return await finished;
      }
      await resetP5();
      prngState = spec.seed | 0;
      // Load p5.brush afresh; its hooks count as brush (API) work.
      const register = window.p5.registerAddon;
      window.p5.registerAddon = function (addon) {
        return apply(register, this, [function (p5, fn, lifecycles) {
          apply(addon, this, [p5, fn, lifecycles]);
          for (const hook of ["presetup", "postsetup", "predraw", "postdraw"]) {
            const original = lifecycles[hook];
            if (typeof original !== "function") continue;
            lifecycles[hook] = function () {
              const prev = mode;
              mode = API;
              try { return apply(original, this, arguments); } finally { mode = prev; }
            };
          }
        }]);
      };
      try {
        (await loadScript("/lib/p5.brush.js")).remove(); // it has run; keep <head> from growing
      } finally {
        window.p5.registerAddon = register;
      }
      window.p5.registerAddon(function refpoolDone(p5, fn, lifecycles) { doneAddon(p5, fn, lifecycles); });
      guardP5();
      const brushView = makeBrush();

      sketchFactory = null;
      lastScript = await loadScript(spec.scriptUrl);
      if (job.scriptError) { finish("error"); return await finished; }
      if (typeof sketchFactory !== "function") { fail(new Error("the sketch script did not load")); return await finished; }

      if (shadowArgs.length !== spec.shadowCount) {  // fail closed: never run a sketch unshadowed
        finish("infra", `harness not configured (${shadowArgs.length} of ${spec.shadowCount} tripwires)`);
        return await finished;
      }
      const args = [brushView];
      for (let i = 0; i < shadowArgs.length; i++) args[i + 1] = shadowArgs[i];
      let entry;
      mode = USER;
      try { entry = apply(sketchFactory, undefined, args); } catch (err) { mode = OTHER; fail(err); return await finished; }
      mode = OTHER;
      if (!entry || typeof entry.setup !== "function") {
        job.violations[job.violations.length] = { code: "no_setup", message: config.codes.no_setup, line: null };
        finish("error");
        return await finished;
      }
      const wrapUser = (fn, name) => function () {
        if (job.finished) return undefined;
        mode = USER;
        let result;
        try { result = apply(fn, undefined, []); } catch (err) { mode = OTHER; fail(err); return undefined; }
        mode = OTHER;
        if (result && typeof result.then === "function") {
          job.violations[job.violations.length] = { code: "async_sketch", message: `${name}() returned a promise: ` + config.codes.async_sketch, line: null };
          finish("error");
        }
        return undefined;
      };
      job.hasDraw = typeof entry.draw === "function";
      window.setup = wrapUser(entry.setup, "setup");
      if (job.hasDraw) window.draw = wrapUser(entry.draw, "draw");
      job.instance = new window.p5();
    } catch (err) {
      fail(err);
    }
    return await finished;
  };

  // Health check: a tiny WebGL draw and read-back proves the GPU process answers.
  const ping = () => {
    const c = apply(createElementOrig, document, ["canvas"]);
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

  // Called by the sketch's script (once, at load): hands over the factory, then disappears.
  defineProperty(window, "__refpoolDefine", {
    configurable: true,
    value: (factory) => {
      sketchFactory = factory;
    },
  });

  // Second line of defence: should a sketch ever get hold of a WebGL or 2D context or a DOM
  // node, using it from its own code still trips. (p5 and brush call these outside USER mode.)
  const guardNative = (proto, names, code) => {
    if (!proto) return;
    for (const name of names) {
      const desc = getOwnPropertyDescriptor(proto, name);
      if (!desc) continue;
      const trip = `${name} is not available to sketches: ` + "painting or changing the page by any route but the brush API";
      if (typeof desc.value === "function") {
        const original = desc.value;
        desc.value = function () {
          if (mode === USER) violate(code, trip);
          return apply(original, this, arguments);
        };
      } else {
        if (desc.get) { const g = desc.get; desc.get = function () { if (mode === USER) violate(code, trip); return apply(g, this, []); }; }
        if (desc.set) { const st = desc.set; desc.set = function (v) { if (mode === USER) violate(code, trip); return apply(st, this, [v]); }; }
      }
      defineProperty(proto, name, desc);
    }
  };
  const GL_CALLS = ["clear", "clearColor", "drawArrays", "drawElements", "drawArraysInstanced",
    "drawElementsInstanced", "drawRangeElements", "texImage2D", "texSubImage2D", "blitFramebuffer",
    "readPixels", "bufferData", "bufferSubData", "useProgram", "bindFramebuffer", "scissor",
    "viewport", "enable", "disable", "colorMask", "clearBufferfv"];
  guardNative(window.WebGL2RenderingContext && WebGL2RenderingContext.prototype, GL_CALLS, "raw_webgl");
  guardNative(window.WebGLRenderingContext && WebGLRenderingContext.prototype, GL_CALLS, "raw_webgl");
  const CTX_CALLS = ["fill", "fillRect", "stroke", "strokeRect", "clearRect", "drawImage", "putImageData",
    "fillText", "strokeText", "getImageData"];
  guardNative(window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype, CTX_CALLS, "raw_webgl");
  guardNative(window.OffscreenCanvasRenderingContext2D && OffscreenCanvasRenderingContext2D.prototype, CTX_CALLS, "raw_webgl");
  guardNative(HTMLCanvasElement.prototype, ["getContext", "toDataURL", "toBlob"], "raw_webgl");
  guardNative(Node.prototype, ["appendChild", "insertBefore", "replaceChild", "removeChild", "textContent", "ownerDocument"], "forbidden_api");
  guardNative(Element.prototype, ["append", "prepend", "after", "before", "replaceWith", "remove", "setAttribute",
    "innerHTML", "outerHTML", "insertAdjacentHTML", "insertAdjacentElement", "attachShadow"], "forbidden_api");
  guardNative(HTMLElement.prototype, ["style", "innerText", "hidden"], "forbidden_api");
  guardNative(Document.prototype, ["createElement", "createElementNS", "querySelector", "querySelectorAll",
    "getElementById", "getElementsByTagName", "write", "body", "head", "defaultView", "styleSheets"], "forbidden_api");
  guardNative(CSSStyleDeclaration.prototype, ["setProperty", "cssText"], "forbidden_api");

  window.addEventListener("load", () => {
    const p5 = window.p5;
    colourToCss = p5.Color.prototype.toString;
    // Built-ins that the harness, p5 and Playwright rely on cannot be patched by a sketch.
    // Object.prototype above all: an inherited getter/setter planted there sees every
    // internal object p5 touches (the instance, the renderer, the GL context) go by.
    const iterProto = (it) => Object.getPrototypeOf(it);
    const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
    const frozen = [
      Object.prototype, Function.prototype, Array.prototype, String.prototype, Number.prototype,
      Boolean.prototype, Symbol.prototype, BigInt.prototype, Date.prototype, RegExp.prototype,
      Map.prototype, Set.prototype, WeakMap.prototype, WeakSet.prototype, Promise.prototype,
      ArrayBuffer.prototype, DataView.prototype, typedArrayProto, Object.getPrototypeOf(typedArrayProto),
      Error.prototype, TypeError.prototype, RangeError.prototype, SyntaxError.prototype,
      ReferenceError.prototype, EvalError.prototype, URIError.prototype,
      iterProto([][Symbol.iterator]()), iterProto(iterProto([][Symbol.iterator]())),
      iterProto(new Map()[Symbol.iterator]()), iterProto(new Set()[Symbol.iterator]()),
      iterProto(""[Symbol.iterator]()), iterProto("a".matchAll(/a/g)),
      Object.getPrototypeOf(function* () {}).prototype, Object.getPrototypeOf(function* () {}),
      Object, Function, Array, String, Number, Boolean, Symbol, Reflect, JSON, Math, Promise,
      Error, Map, Set, Proxy, Date, RegExp,
    ];
    for (const target of frozen) if (target) Object.freeze(target);
    // Lock the global bindings too: frozen objects are no use if a sketch can say
    // `Math = fake` and have p5.brush call its functions mid-brush.
    for (const name of INTRINSICS) {
      const desc = getOwnPropertyDescriptor(window, name);
      if (!desc) continue;
      const value = window[name];
      if (value !== null && (typeof value === "object" || typeof value === "function")) {
        Object.freeze(value);
        if (typeof value === "function" && value.prototype) Object.freeze(value.prototype);
      }
      if (desc.configurable) {
        defineProperty(window, name, { value, writable: false, configurable: false, enumerable: desc.enumerable });
      }
    }
    pristineProto = Object.create(null); // no inherited keys: "constructor" is a p5 name too
    for (const name of getOwnPropertyNames(p5.prototype)) pristineProto[name] = getOwnPropertyDescriptor(p5.prototype, name);
    pristineHooks = Object.create(null);
    for (const hook in p5.lifecycleHooks) pristineHooks[hook] = p5.lifecycleHooks[hook].length;
  });

  // Every other global of this page (DOM constructors, window's own properties...).
  const globals = () => {
    const p5names = new Set(getOwnPropertyNames(window.p5.prototype));
    const names = new Set();
    for (let o = window; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
      for (const n of getOwnPropertyNames(o)) names.add(n);
    }
    const out = [];
    for (const n of names) {
      if (!/^[A-Za-z_$][\w$]*$/.test(n) || INTRINSICS.has(n) || UNUSABLE.has(n) || p5names.has(n) || n === API_NAME) continue;
      out[out.length] = n;
    }
    return out;
  };

  defineProperty(window, API_NAME, { value: Object.freeze({ run, ping, globals, configure }), configurable: false, writable: false, enumerable: false });
})();
