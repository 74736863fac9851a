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
  const weakSetHas = WeakSet.prototype.has;
  const weakSetAdd = WeakSet.prototype.add;
  const stringIndexOf = String.prototype.indexOf;
  const toDataURLOrig = HTMLCanvasElement.prototype.toDataURL;
  const getContextOrig = HTMLCanvasElement.prototype.getContext;
  const ErrorCtor = Error;
  // Deep enough that a sketch frame is always in a captured stack (see sketchOnStack).
  Error.stackTraceLimit = 200;
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

  // Our own tripwire errors, known by identity: a sketch's look-alike (or a Proxy) is never
  // asked what it is (instanceof would run a Proxy's getPrototypeOf trap in our frames).
  const tripped = new WeakSet();
  const isTripped = (err) => apply(weakSetHas, tripped, [err]);

  const record = (v) => {
    if (!job) return;
    if (job.finished) { job.late[job.late.length] = v; return; }
    job.violations[job.violations.length] = v;
  };

  const violate = (code, message) => {
    record({ code, message, line: userLine(new ErrorCtor().stack) });
    const err = new ErrorCtor(message);
    apply(weakSetAdd, tripped, [err]);
    throw err;
  };

  // Is the sketch's own script anywhere on the stack? Sketch code that runs outside USER
  // mode (a microtask, a FinalizationRegistry callback, a getter we were tricked into
  // reading) still has its frames there, so guards trip in every mode.
  const sketchOnStack = () => {
    if (!job) return false;
    const stack = new ErrorCtor().stack;
    return typeof stack === "string" && apply(stringIndexOf, stack, [job.scriptUrl]) >= 0;
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

  // The canvas's own pixels (never a page screenshot, which CSS could alter), or why not.
  const capture = () => {
    const inst = job.instance;
    const canvas = inst && inst.canvas;
    if (!canvas) return { error: "no canvas" };
    const gl = apply(getContextOrig, canvas, ["webgl2"]) || apply(getContextOrig, canvas, ["webgl"]);
    // A lost context is the GPU process's doing (or an earlier page's): not this sketch's.
    if (!gl || gl.isContextLost()) return { error: "the WebGL context was lost" };
    return { png: apply(toDataURLOrig, canvas, ["image/png"]) };
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
    if (status === "error" && job.violations.length === 0) {
      // An error is never a pass: a sketch that failed without saying why still failed.
      job.violations[job.violations.length] = {
        code: "runtime_error", line: null, message: "the sketch stopped with an error that is not an Error object",
      };
    }
    job.finished = true;
    const inst = job.instance;
    if (inst) inst._loop = false;
    let png = null;
    if (status === "done" && job.violations.length === 0 && job.canvas) {
      let shot;
      const prev = mode;
      mode = API;
      try { shot = capture(); } catch (_e) { shot = { error: "could not read the canvas" }; } finally { mode = prev; }
      if (shot.error) { status = "infra"; detail = shot.error; } else png = shot.png;
    }
    // A string, built with captured intrinsics: nothing the sketch patched can garble it.
    job.resolve(stringify({ status, detail: detail || null, violations: job.violations,
                            paints: job.paints, frames: job.frames, canvas: job.canvas, png }));
  };

  // What a thrown value says about itself, asked while the guards are up (USER mode): its
  // getters and a Proxy's traps are the sketch's code and run under the sketch's rules.
  // Only string answers are kept.
  const describe = (err) => {
    const out = { name: "", message: "", stack: null };
    if (err === null || (typeof err !== "object" && typeof err !== "function")) {
      out.message = typeof err === "symbol" ? "a symbol" : "" + err;
      return out;
    }
    const prev = mode;
    mode = USER;
    try {
      const name = err.name, message = err.message, stack = err.stack;
      if (typeof name === "string") out.name = name;
      if (typeof message === "string") out.message = message;
      if (typeof stack === "string") out.stack = stack;
    } catch (_e) {
      /* a value that throws when asked is still an error */
    } finally { mode = prev; }
    return out;
  };

  const fail = (err) => {
    if (!job || job.finished) return;
    if (isTripped(err)) { finish("error"); return; }
    const info = describe(err);
    if (job.finished) return;
    if (info.name === "EvalError") {
      job.violations[job.violations.length] = {
        code: "forbidden_api", message: "eval and new Function are not allowed: " + config.codes.forbidden_api,
        line: userLine(info.stack),
      };
    } else {
      const text = stringSlice.call(info.message || "the sketch threw a value that is not an Error", 0, 500);
      job.violations[job.violations.length] = {
        code: "runtime_error", message: (info.name ? stringSlice.call(info.name, 0, 50) + ": " : "") + text,
        line: userLine(info.stack),
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
  const ObjectProto = Object.prototype;
  const getPrototypeOf = Object.getPrototypeOf;
  const freeze = Object.freeze;
  const mathFns = { sqrt: Math.sqrt, cos: Math.cos, sin: Math.sin, atan2: Math.atan2, acos: Math.acos };

  // A sketch's vector: plain numbers and maths done here, never a p5.Vector (whose methods
  // and prototype lead back to p5). The common p5.Vector methods, chainable like p5's.
  function SafeVector(x, y, z) { this.x = +x || 0; this.y = +y || 0; this.z = +z || 0; }
  const num = (v) => (typeof v === "number" ? v : 0);
  const parts = (a, b, c) => {
    if (a !== null && typeof a === "object") return [num(a.x), num(a.y), num(a.z)];
    if (typeof a === "number" && b === undefined && c === undefined) return [a, a, a];
    return [num(a), num(b), num(c)];
  };
  const V = SafeVector.prototype;
  V.set = function (a, b, c) { const p = parts(a, b, c); this.x = p[0]; this.y = p[1]; this.z = p[2]; return this; };
  V.copy = function () { return new SafeVector(this.x, this.y, this.z); };
  V.add = function (a, b, c) { const p = parts(a, b, c); this.x += p[0]; this.y += p[1]; this.z += p[2]; return this; };
  V.sub = function (a, b, c) { const p = parts(a, b, c); this.x -= p[0]; this.y -= p[1]; this.z -= p[2]; return this; };
  V.mult = function (a, b, c) { const p = parts(a, b, c); this.x *= p[0]; this.y *= p[1]; this.z *= p[2]; return this; };
  V.div = function (a, b, c) { const p = parts(a, b, c); if (p[0] && p[1] && (p[2] || this.z === 0)) { this.x /= p[0]; this.y /= p[1]; if (p[2]) this.z /= p[2]; } return this; };
  V.magSq = function () { return this.x * this.x + this.y * this.y + this.z * this.z; };
  V.mag = function () { return mathFns.sqrt(this.magSq()); };
  V.dot = function (a, b, c) { const p = parts(a, b, c); return this.x * p[0] + this.y * p[1] + this.z * p[2]; };
  V.cross = function (v) { const p = parts(v); return new SafeVector(this.y * p[2] - this.z * p[1], this.z * p[0] - this.x * p[2], this.x * p[1] - this.y * p[0]); };
  V.dist = function (v) { const p = parts(v); const dx = p[0] - this.x, dy = p[1] - this.y, dz = p[2] - this.z; return mathFns.sqrt(dx * dx + dy * dy + dz * dz); };
  V.normalize = function () { const m = this.mag(); if (m) { this.x /= m; this.y /= m; this.z /= m; } return this; };
  V.setMag = function (n) { return this.normalize().mult(num(n)); };
  V.limit = function (n) { const m = this.mag(); if (m > n) this.setMag(n); return this; };
  V.heading = function () { return mathFns.atan2(this.y, this.x); };
  V.setHeading = function (a) { const m = this.mag(); this.x = m * mathFns.cos(a); this.y = m * mathFns.sin(a); return this; };
  V.rotate = function (a) { const c = mathFns.cos(a), s = mathFns.sin(a), x = this.x; this.x = x * c - this.y * s; this.y = x * s + this.y * c; return this; };
  V.lerp = function (a, b, c, amt) {
    if (a !== null && typeof a === "object") { amt = b; const p = parts(a); a = p[0]; b = p[1]; c = p[2]; }
    this.x += (num(a) - this.x) * num(amt); this.y += (num(b) - this.y) * num(amt); this.z += (num(c) - this.z) * num(amt); return this;
  };
  V.angleBetween = function (v) { const p = parts(v); const d = this.mag() * mathFns.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]); return d ? mathFns.acos(this.dot(v) / d) : 0; };
  V.array = function () { return [this.x, this.y, this.z]; };
  V.equals = function (a, b, c) { const p = parts(a, b, c); return this.x === p[0] && this.y === p[1] && this.z === p[2]; };
  V.toString = function () { return "vector[" + this.x + ", " + this.y + ", " + this.z + "]"; };
  freeze(V);
  freeze(SafeVector);

  const isVectorLike = (value) => {
    const proto = getPrototypeOf(value); // a Proxy's trap runs here, in USER mode
    return proto === ObjectProto || proto === null || proto === V;
  };

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
    if (typeof value === "object" && isVectorLike(value)) {
      if (!forBrush && inst) {
        const xyz = [0, 0, 0];
        let found = 0;
        ["x", "y", "z"].forEach((k, i) => {
          const d = getOwnPropertyDescriptor(value, k);
          if (d && "value" in d && typeof d.value === "number") { xyz[i] = d.value; found++; }
        });
        if (found >= 2) return apply(vectorFrom, inst, xyz); // a vector-like {x, y[, z]}
      } else if (forBrush && depth < 2) {
        // An options object, as p5.brush documents (brush.hatch(x, y, {rand: true})):
        // copied key by key into a fresh plain object, data properties only.
        const keys = getOwnPropertyNames(value);
        if (keys.length > 64) bad("was given an options object with too many keys");
        const out = {};
        for (let i = 0; i < keys.length; i++) {
          const d = getOwnPropertyDescriptor(value, keys[i]);
          if (!d) continue;
          if (!("value" in d)) bad("was given an object with a getter in it");
          defineProperty(out, keys[i], { value: copyValue(d.value, depth + 1, name, forBrush, inst), enumerable: true, writable: true, configurable: true });
        }
        return out;
      }
    }
    return bad("was given an object or function");
  };
  const copyArgs = (args, name, forBrush, inst) => {
    const out = [];
    for (let i = 0; i < args.length; i++) out[i] = copyValue(args[i], 0, name, forBrush, inst);
    return out;
  };

  // A colour is an opaque handle; its setters build a new colour from the old one's CSS.
  const colourProto = Object.create(null);
  const colourCss = (h) => colourHandles.get(h) || "rgba(0,0,0,1)";
  const text = function () { return colourCss(this); };
  const withColour = (handle, edit) => {
    const P5 = window.p5;
    const inst = job && job.instance;
    if (!P5 || !inst || !colourHandles.has(handle)) return undefined;
    const prev = mode;
    mode = API;
    try {
      const c = apply(colourFromCss, inst, [colourCss(handle)]);
      edit(c);
      colourHandles.set(handle, apply(colourToCss, c, ["rgba"]));
    } finally { mode = prev; }
    return undefined;
  };
  const setter = (method) => function (v) {
    if (typeof v !== "number") violate("bad_argument", `${method}() takes a number`);
    return withColour(this, (c) => apply(c[method], c, [v]));
  };
  defineProperty(colourProto, "toString", { value: text });
  defineProperty(colourProto, "valueOf", { value: text });
  defineProperty(colourProto, Symbol.toPrimitive, { value: text });
  for (const m of ["setAlpha", "setRed", "setGreen", "setBlue"]) defineProperty(colourProto, m, { value: setter(m) });
  freeze(colourProto);

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
      const handle = freeze(Object.create(colourProto));
      colourHandles.set(handle, apply(colourToCss, value, ["rgba"]));
      return handle;
    }
    if (P5 && value instanceof P5.Vector) return new SafeVector(value.x, value.y, value.z);
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
    if (name === "resizeCanvas") return "canvas_size";
    if (stringSlice.call(name, 0, 4) === "load" || stringSlice.call(name, 0, 4) === "save" ||
        stringSlice.call(name, 0, 4) === "http" || stringSlice.call(name, 0, 6) === "select" ||
        stringSlice.call(name, 0, 6) === "create" || name === "getURL" || name === "getURLPath" ||
        name === "getURLParams" || name === "remove" || name === "cursor" || name === "fullscreen") return "forbidden_api";
    return "p5_forbidden";
  };

  const outsideSketch = (name) => violate("async_sketch", `${name}() was called from a callback, promise or getter, outside setup()/draw(): ` + config.codes.async_sketch);

  const callApi = (inst, fn, args) => {
    const prev = mode;
    mode = API;
    try { return sanitise(apply(fn, inst, args)); } finally { mode = prev; }
  };
  // Helpers the harness answers itself, because p5's own version would refuse honest code,
  // touch the page, or make the capture wait in wall-clock time.
  const SPECIAL = {
    // Frames are counted, not timed: a sketch is captured after maxFrames frames whatever
    // rate it asks for, so the rate is accepted and ignored.
    frameRate: (inst, args, original) => (args.length === 0 ? callApi(inst, original, []) : undefined),
    // The harness renders at density 1 (the fixed canvas size); asking for 1 is a no-op.
    pixelDensity: (inst, args) => {
      if (args.length === 0) return 1;
      if (args[0] !== 1) violate("canvas_size", "pixelDensity() must stay 1 here: remove the call or use pixelDensity(1)");
      return undefined;
    },
    // An accessibility description: p5 builds DOM for it; nothing to draw, so a no-op.
    describe: () => undefined,
    describeElement: () => undefined,
    // random(array) hands back one of the sketch's own elements (objects included), chosen
    // with p5's seeded random() like p5's own random(array) does.
    random: (inst, args, original) => {
      const first = args[0];
      if (args.length === 1 && first !== null && typeof first === "object" && isArray(first)) {
        const length = first.length;
        if (typeof length !== "number" || length === 0) return undefined;
        const r = callApi(inst, original, []);
        return first[r * length | 0];
      }
      return callApi(inst, original, copyArgs(args, "random", false, inst));
    },
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
        const special = SPECIAL[name];
        guarded = function () {
          if (mode === USER) {
            if (special) return special(this, arguments, original);
            if (category !== "helper") violate(category, `${name}() is not allowed: ` + config.codes[category]);
            const safe = copyArgs(arguments, name, false, this);
            const prev = mode;
            mode = API;
            try { return sanitise(apply(original, this, safe)); } finally { mode = prev; }
          }
          // Painting from anywhere but inside brush (e.g. a promise callback) is a violation.
          // Also after the frame is done: nothing may paint between "done" and the capture.
          if (painting && mode !== API) violate(category, `${name}() was called outside the brush API`);
          if (mode === OTHER && sketchOnStack()) outsideSketch(name);
          return apply(original, this, arguments);
        };
      }
      defineProperty(proto, name, { value: guarded, writable: true, configurable: true, enumerable: desc.enumerable });
    }
  };

  // --- what the sketch's global p5 names resolve to -------------------------------------
  // p5 binds its functions onto window for global mode; p5 itself calls its prototype, not
  // these. Each becomes a facade that works only in USER mode (or for library code in API
  // mode) and trips otherwise, so a callback the sketch scheduled can never reach p5.
  const installFacades = (inst) => {
    const names = getOwnPropertyNames(window.p5.prototype);
    const own = getOwnPropertyNames(inst);
    for (let i = 0; i < own.length; i++) names[names.length] = own[i];
    for (const name of names) {
      if (name[0] === "_" || name === "constructor" || name === "setup" || name === "draw") continue;
      const desc = getOwnPropertyDescriptor(window, name);
      if (!desc || !desc.configurable) continue;
      const category = categorise(name);
      if (typeof desc.value === "function") {
        const bound = desc.value;
        const facade = (...args) => {
          if (mode !== OTHER) return apply(bound, undefined, args); // USER: guarded; API: library
          // p5's own draw loop calls a few of these (resetMatrix(), scale(d)) through window;
          // anything else here is sketch code scheduled to run later, and trips.
          if (category !== "helper" || sketchOnStack()) outsideSketch(name);
          for (let i = 0; i < args.length; i++) if (!isPrimitive(args[i])) outsideSketch(name);
          return sanitise(apply(bound, undefined, args));
        };
        defineProperty(window, name, { value: facade, configurable: true, enumerable: true, writable: false });
      } else if (desc.get) {
        const getter = desc.get;
        const wrapped = (fn) => (...args) => {
          if (mode !== USER) outsideSketch(name);
          if (category !== "helper") violate(category, `${name}() is not allowed: ` + config.codes[category]);
          return callApi(inst, fn, copyArgs(args, name, false, inst));
        };
        defineProperty(window, name, {
          configurable: true, enumerable: true,
          get: () => {
            if (mode === OTHER && sketchOnStack()) outsideSketch(name);
            const value = apply(getter, window, []);
            if (mode === API) return value;
            return typeof value === "function" ? wrapped(value) : sanitise(value);
          },
          set: desc.set,
        });
      }
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
    } else {
      fail(event.error !== undefined ? event.error : event.message);
    }
  });
  window.addEventListener("unhandledrejection", (event) => { fail(event.reason); });
  // The CSP blocked something (eval, a request, an image): the sketch tried to get out.
  document.addEventListener("securitypolicyviolation", (event) => {
    if (!job) return;
    record({
      code: "forbidden_api", line: null,
      message: `blocked by the page's security policy (${event.effectiveDirective}` +
        (event.blockedURI ? ` ${event.blockedURI}` : "") + "): " + config.codes.forbidden_api,
    });
  });
  // Nothing may leave the page: popups, link clicks and form submissions are stopped here
  // (and the browser's proxy settings refuse any request that gets past this anyway).
  const escape = (what) => {
    record({ code: "forbidden_api", line: null, message: `${what} is not allowed: ` + (config ? config.codes.forbidden_api : "") });
  };
  defineProperty(window, "open", { value: () => { escape("opening a window"); return null; }, configurable: false, writable: false });
  for (const type of ["click", "auxclick", "submit"]) {
    window.addEventListener(type, (event) => {
      event.preventDefault();
      event.stopImmediatePropagation();
      escape(`a ${type} on the page (links, forms)`);
    }, true);
  }
  for (const proto of [window.HTMLAnchorElement && HTMLAnchorElement.prototype, window.HTMLAreaElement && HTMLAreaElement.prototype, window.HTMLFormElement && HTMLFormElement.prototype, HTMLElement.prototype]) {
    if (!proto) continue;
    for (const name of ["click", "submit", "requestSubmit"]) {
      if (!getOwnPropertyDescriptor(proto, name)) continue;
      defineProperty(proto, name, { value: () => { escape(`${name}() on a page element`); }, configurable: false, writable: false });
    }
  }

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
      seed: spec.seed, violations: [], late: [], paints: 0, frames: 0, canvas: null, finished: false,
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
      let entry, setupFn, drawFn;
      mode = USER;
      try {
        // Read while still in USER mode: whatever the sketch planted runs under its rules.
        entry = apply(sketchFactory, undefined, args);
        setupFn = entry.setup;
        drawFn = entry.draw;
      } catch (err) { mode = OTHER; fail(err); return await finished; }
      mode = OTHER;
      if (typeof setupFn !== "function") {
        job.violations[job.violations.length] = { code: "no_setup", message: config.codes.no_setup, line: null };
        finish("error");
        return await finished;
      }
      // setup()/draw() run in USER mode. What they return is never looked at (an async
      // setup's promise, or a thenable posing as one): code after an `await` runs later,
      // outside USER mode, where every brush and p5 call trips.
      const wrapUser = (fn) => function () {
        if (job.finished) return undefined;
        mode = USER;
        try { apply(fn, undefined, []); } catch (err) { mode = OTHER; fail(err); return undefined; }
        mode = OTHER;
        return undefined;
      };
      job.hasDraw = typeof drawFn === "function";
      window.setup = wrapUser(setupFn);
      if (job.hasDraw) window.draw = wrapUser(drawFn);
      mode = API;
      try { job.instance = new window.p5(); } finally { mode = OTHER; }
      installFacades(job.instance);
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
      // USER mode always trips; outside it, so does any call with the sketch on the stack
      // (a callback, microtask or getter the sketch set up). API mode is library code.
      const check = () => { if (mode === USER || (mode === OTHER && sketchOnStack())) violate(code, trip); };
      if (typeof desc.value === "function") {
        const original = desc.value;
        desc.value = function () {
          if (mode !== API) check();
          return apply(original, this, arguments);
        };
      } else {
        if (desc.get) { const g = desc.get; desc.get = function () { if (mode !== API) check(); return apply(g, this, []); }; }
        if (desc.set) { const st = desc.set; desc.set = function (v) { if (mode !== API) check(); return apply(st, this, [v]); }; }
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

  // Violations recorded after the job's answer (late CSP reports, blocked popups): the page
  // is used for this one job only, so they belong to it.
  const late = () => stringify(job ? job.late : []);

  defineProperty(window, API_NAME, { value: Object.freeze({ run, ping, globals, configure, late }), configurable: false, writable: false, enumerable: false });
})();
