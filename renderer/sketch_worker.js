// refpool sketch realm: the bootstrap of the dedicated Worker one job's sketch runs in.
//
// renderer/job.py appends `(config, function () { <the sketch> })` to this function
// expression. It runs before any sketch code: it removes every global that is not a
// JavaScript intrinsic, then installs a facade of p5 and p5.brush that RECORDS typed calls.
// The worker has no DOM, no canvas, no network and no storage, so nothing here can paint:
// the painting page (harness.js) validates the recorded calls and replays them on the real
// p5.brush. Whatever the sketch does to this realm changes only what it asks to be painted.
(function refpoolSketchRealm(config, factory, makeSeededRandom, makeIntegrity) {
  "use strict";
  const scope = self;
  const post = scope.postMessage.bind(scope);
  const listen = scope.addEventListener.bind(scope);
  const macrotask = scope.setTimeout.bind(scope);
  const nativeClone = scope.structuredClone; // a copy of data: no I/O, the env's own behaviour
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const ownNames = Object.getOwnPropertyNames;
  const protoOf = Object.getPrototypeOf;
  const create = Object.create;
  const freeze = Object.freeze;
  const isArray = Array.isArray;
  const isFinite = Number.isFinite;
  const ErrorCtor = Error;
  const slice = String.prototype.slice;
  const PromiseCtor = Promise;
  const assign = Object.assign;
  const ObjectProto = Object.prototype;
  const indexOf = String.prototype.indexOf;
  // Captured before any sketch code: the realm answers and records through these even when
  // the sketch has replaced the built-ins (every such change is itself reported).
  const promiseThen = Promise.prototype.then;
  const weakAdd = WeakSet.prototype.add, weakHas = WeakSet.prototype.has;
  const sketchText = Function.prototype.toString.call(factory);
  // JavaScript's own globals, and the intrinsics no global names, for the integrity snapshot.
  const intrinsicRoots = [];
  for (const name of config.intrinsics) if (name !== "globalThis" && scope[name] != null) intrinsicRoots.push([name, scope[name]]);
  const hiddenFunctions = [async function () {}, function* () {}, async function* () {}];
  const hiddenIterators = [[][Symbol.iterator](), new Map().entries(), new Set().values(), ""[Symbol.iterator](),
    /a/[Symbol.matchAll](""), (function* () {})(), (async function* () {})()];
  intrinsicRoots.push(["%AsyncFunction%.prototype", protoOf(hiddenFunctions[0])], ["%GeneratorFunction%.prototype", protoOf(hiddenFunctions[1])],
    ["%AsyncGeneratorFunction%.prototype", protoOf(hiddenFunctions[2])], ["%TypedArray%", protoOf(Uint8Array)]);
  for (const it of hiddenIterators) intrinsicRoots.push([`%${Object.prototype.toString.call(it).slice(8, -1)}%.prototype`, protoOf(it)]);
  const F32 = Float32Array;
  const F64 = Float64Array;
  const M = {};
  for (const k of ownNames(Math)) M[k] = Math[k];
  Error.stackTraceLimit = 12;

  // --- results (null-prototype records: setters planted on Object.prototype never see them)
  const rec = (fields) => assign(create(null), fields);
  const violations = [];
  const consoleLines = [];
  const frames = [[]]; // frames[0] is setup(); frames[k] is the k-th draw()
  const state = rec({ frame: 0, running: false, ops: 0, paints: 0, canvas: false, looping: true,
                      finished: false, nextId: 1, angleDegrees: false });
  // An own property, defined: a setter planted on Array.prototype never sees our records.
  const push = (list, item) => { defineProperty(list, list.length, rec({ value: item, writable: true, enumerable: true, configurable: true })); };

  const lineOf = (stack) => {
    if (typeof stack !== "string") return null;
    // The innermost frame below the realm's own lines (they share the script) is the sketch's.
    const marker = config.scriptUrl + ":";
    let at = apply(indexOf, stack, [marker]);
    while (at >= 0) {
      at += marker.length;
      let n = 0;
      while (at < stack.length && stack.charCodeAt(at) >= 48 && stack.charCodeAt(at) <= 57) {
        n = n * 10 + stack.charCodeAt(at) - 48;
        at++;
      }
      if (n > config.prefixLines) return n - config.prefixLines;
      at = apply(indexOf, stack, [marker, at]);
    }
    return null;
  };
  const here = () => {
    try { return lineOf(new ErrorCtor().stack); } catch (_e) { return null; } // a planted Error getter
  };

  // Our own refusals, known by identity, so the sketch's catch cannot turn them into paint.
  const refusals = new WeakSet();
  // Every violation is posted to the page the moment it is recorded: an attempt is the
  // verdict even if the sketch then catches our error, hangs, or breaks the rest of the run.
  const note = (v) => {
    if (violations.length >= 50) return;
    push(violations, v);
    post(rec({ status: "attempt", violation: v }));
  };
  const violate = (code, message, line) => {
    note(rec({ code, message: apply(slice, String(message), [0, 500]), line: line === undefined ? here() : line }));
    const err = new ErrorCtor(message);
    apply(weakAdd, refusals, [err]);
    throw err;
  };
  const why = (code) => config.codes[code] || "";
  // The RL environment's text rules refuse some of these names too: say so, in its words.
  const envRules = rec(config.envRules);
  const envSays = (name) => (typeof envRules[name] === "string" ? ` (the RL environment's gate refuses it too: ${envRules[name]})` : "");

  // --- the allowlisted global object ------------------------------------------------------
  const KEEP = new Set(config.intrinsics);
  const removed = []; // every name the worker had: each becomes a tripwire below
  // A constant that cannot be deleted (TEMPORARY, PERSISTENT) leads nowhere.
  const inert = (d) => d && "value" in d && (d.value === null || (typeof d.value !== "object" && typeof d.value !== "function"));
  for (let o = scope; o && o !== Object.prototype; o = protoOf(o)) {
    for (const name of Reflect.ownKeys(o)) {
      if (typeof name === "string" && KEEP.has(name) && o === scope) continue;
      if (typeof name === "string") removed.push(name);
      if (!Reflect.deleteProperty(o, name) && !inert(Object.getOwnPropertyDescriptor(o, name))) {
        post({ status: "infra", detail: `could not remove ${String(name)} from the sketch realm` });
        throw new ErrorCtor("sketch realm not clean");
      }
    }
  }
  const define = (name, value) => defineProperty(scope, name, { value, writable: true, configurable: true, enumerable: false });
  const tripwire = (name, code) => {
    const trip = () => violate(code, `${name} is not available to sketches${envSays(name)}: ${why(code)}`);
    defineProperty(scope, name, { get: trip, set: trip, configurable: true, enumerable: false });
  };

  // --- argument encoding: only data, colour and geometry handles cross to the page ---------
  const handles = new WeakMap(); // a facade object -> {"$c": id} or {"$h": id}
  const encode = (value, depth, where) => {
    if (value === undefined) return rec({ $u: 1 });
    if (value === null || typeof value === "boolean") return value;
    if (typeof value === "number") {
      if (!isFinite(value)) violate("bad_argument", `${where} was given ${value}: check the maths that computes it`);
      return value;
    }
    if (typeof value === "string") {
      if (value.length > 2000) violate("bad_argument", `${where} was given a string of ${value.length} characters`);
      return value;
    }
    if (typeof value === "object" && handles.has(value)) return handles.get(value);
    if (value instanceof Vector) return rec({ $v: [value.x, value.y, value.z] });
    if (depth >= 3) violate("bad_argument", `${where} was given arrays or objects nested too deeply`);
    if (isArray(value)) {
      const n = value.length;
      if (!(n <= 20000)) violate("bad_argument", `${where} was given a huge array`);
      const out = [];
      for (let i = 0; i < n; i++) out[i] = encode(value[i], depth + 1, where);
      return out;
    }
    if (typeof value === "object" && (protoOf(value) === ObjectProto || protoOf(value) === null)) {
      const keys = ownNames(value);
      if (keys.length > 64) violate("bad_argument", `${where} was given an options object with too many keys`);
      const out = create(null);
      for (const k of keys) out[k] = encode(value[k], depth + 1, where);
      return rec({ $o: out });
    }
    const kind = typeof value === "function" ? "a function" : "an object of a class";
    return violate("bad_argument", `${where} was given ${kind}; pass numbers, strings (colours), arrays, vectors or colours from color()`);
  };
  const encodeArgs = (args, where) => {
    let n = args.length;
    while (n > 0 && args[n - 1] === undefined) n--; // trailing undefined: the callee's defaults
    const out = [];
    for (let i = 0; i < n; i++) out[i] = encode(args[i], 0, `${where} (argument ${i + 1})`);
    return out;
  };

  // Every recorded call: {op, name, args, line[, id][, target]} in the current frame.
  let guardBuiltins = (_name) => {}; // set once the built-ins' snapshot is taken (below)
  const record = (op, name, args, extra) => {
    guardBuiltins(name);
    recordChecked(op, name, args, extra);
  };
  // For a caller that checked the built-ins itself, with none of the sketch's code run since.
  const recordChecked = (op, name, args, extra) => {
    if (!state.running) {
      violate("async_sketch", `${name}() was called from a callback or promise after setup()/draw() had returned: ${why("async_sketch")}`);
    }
    if (++state.ops > config.maxCalls) {
      violate("bad_argument", `the sketch made more than ${config.maxCalls} drawing calls; draw less per frame`);
    }
    const call = rec({ op, name, args: encodeArgs(args, name + "()"), line: here() });
    if (extra) for (const k of ownNames(extra)) call[k] = extra[k];
    push(frames[state.frame], call);
  };
  const newHandle = (kind, proto) => {
    const id = state.nextId++;
    const obj = freeze(create(proto));
    handles.set(obj, rec({ [kind]: id }));
    return [obj, id];
  };

  // --- colours: handles evaluated in the painting page, where colorMode applies ----------
  const colourProto = create(null);
  const colourMethod = (method) => function (...args) {
    const ref = handles.get(this);
    if (!ref || ref.$c === undefined) violate("bad_argument", `${method}() needs a colour made with color()`);
    record("colour", method, args, { target: ref });
    return undefined;
  };
  for (const m of config.colourMethods) {
    defineProperty(colourProto, m, { value: function (...args) {
      apply(colourMethod(m), this, args);
      const v = colourValues.get(this);
      if (v) colourValues.set(this, setChannel(v, m, args[0]));
      return undefined;
    } });
  }
  defineProperty(colourProto, "toString", { value: () => "[p5.Color]" });
  freeze(colourProto);
  const makeColour = (name, args) => {
    guardBuiltins(name); // before the handle is made: that runs on the built-ins too
    const [obj, id] = newHandle("$c", colourProto);
    recordChecked("color", name, args, { id });
    const value = name === "lerpColor" ? lerpValue(args) : colourValue(args);
    if (value) colourValues.set(obj, value);
    return obj;
  };

  // --- reading a colour's channels, here where the sketch asks (p5 2.x's readers) ----------
  // The page paints the colour handle; the channels are computed here from what the sketch
  // passed, in the colorMode it was in, so red()/hue()/... return numbers as p5 does.
  const colourValues = new WeakMap(); // a colour handle -> [r, g, b, a], each 0..1
  const colourModes = rec({ mode: config.constants.RGB || "rgb", maxes: rec({}) });
  const defaultMaxes = (mode) => (mode === (config.constants.RGB || "rgb") ? [255, 255, 255, 255] : [360, 100, 100, 1]);
  const maxesOf = (mode) => colourModes.maxes[mode] || defaultMaxes(mode);
  const HSB = config.constants.HSB || "hsb", HSL = config.constants.HSL || "hsl";
  const hsbToRgb = (h, s, v) => {
    const f = (n) => { const k = (n + h * 6) % 6; return v - v * s * M.max(0, M.min(k, 4 - k, 1)); };
    return [f(5), f(3), f(1)];
  };
  const hslToRgb = (h, s, l) => {
    const a = s * M.min(l, 1 - l);
    const f = (n) => { const k = (n + h * 12) % 12; return l - a * M.max(-1, M.min(k - 3, 9 - k, 1)); };
    return [f(0), f(8), f(4)];
  };
  const rgbToHsx = (r, g, b) => {
    const max = M.max(r, g, b), min = M.min(r, g, b), d = max - min;
    let h = 0;
    if (d) h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
    h = ((h * 60) + 360) % 360 / 360;
    const l = (max + min) / 2;
    return rec({ h, sb: max ? d / max : 0, v: max, sl: d ? d / (1 - M.abs(2 * l - 1)) : 0, l });
  };
  const clamp01 = (x) => M.min(1, M.max(0, x));
  const fromNumbers = (n, mode) => {
    const mx = maxesOf(mode);
    if (n.length === 1 || n.length === 2) {
      const g = clamp01(n[0] / maxesOf(config.constants.RGB || "rgb")[0]);
      return [g, g, g, n.length === 2 ? clamp01(n[1] / mx[3]) : 1];
    }
    const a = n.length > 3 ? clamp01(n[3] / mx[3]) : 1;
    const [x, y, z] = [n[0] / mx[0], clamp01(n[1] / mx[1]), clamp01(n[2] / mx[2])];
    if (mode === HSB) return [...hsbToRgb(((x % 1) + 1) % 1, y, z), a];
    if (mode === HSL) return [...hslToRgb(((x % 1) + 1) % 1, y, z), a];
    return [clamp01(x), y, z, a];
  };
  const cssNumber = (t, scale) => (t.endsWith("%") ? parseFloat(t) / 100 : parseFloat(t) / scale);
  const fromCss = (text) => {
    const s = text.trim().toLowerCase();
    if (s[0] === "#") {
      const h = s.slice(1);
      if (!/^[0-9a-f]+$/.test(h) || [3, 4, 6, 8].indexOf(h.length) < 0) return null;
      const d = h.length <= 4 ? [...h].map((c) => parseInt(c + c, 16)) : h.match(/../g).map((c) => parseInt(c, 16));
      return [d[0] / 255, d[1] / 255, d[2] / 255, d.length > 3 ? d[3] / 255 : 1];
    }
    const named = config.namedColours[s];
    if (named) return [named[0] / 255, named[1] / 255, named[2] / 255, s === "transparent" ? 0 : 1];
    const m = /^(rgba?|hsla?|hsba?)\(([^)]*)\)$/.exec(s);
    if (!m) return null;
    const t = m[2].split(/[\s,/]+/).filter((x) => x);
    if (t.length < 3 || t.some((x) => !isFinite(parseFloat(x)))) return null;
    const alpha = t.length > 3 ? clamp01(cssNumber(t[3], 1)) : 1;
    if (m[1][0] === "r") return [clamp01(cssNumber(t[0], 255)), clamp01(cssNumber(t[1], 255)), clamp01(cssNumber(t[2], 255)), alpha];
    const h = ((parseFloat(t[0]) / 360) % 1 + 1) % 1, u = clamp01(cssNumber(t[1], 100)), w = clamp01(cssNumber(t[2], 100));
    return [...(m[1][2] === "l" ? hslToRgb(h, u, w) : hsbToRgb(h, u, w)), alpha];
  };
  const colourValue = (args) => {
    const a0 = args[0];
    if (args.length === 1 && a0 !== null && typeof a0 === "object" && colourValues.has(a0)) return [...colourValues.get(a0)];
    if (typeof a0 === "string") return args.length === 1 ? fromCss(a0) : null;
    const n = isArray(a0) ? a0 : args;
    if (n.length < 1 || n.length > 4) return null;
    for (let i = 0; i < n.length; i++) if (typeof n[i] !== "number" || !isFinite(n[i])) return null;
    return fromNumbers(n, colourModes.mode);
  };
  const lerpValue = ([c1, c2, t]) => {
    const a = colourValue([c1]), b = colourValue([c2]);
    if (!a || !b || typeof t !== "number") return null;
    const k = clamp01(t);
    return [0, 1, 2, 3].map((i) => a[i] + (b[i] - a[i]) * k);
  };
  const setChannel = (v, method, x) => {
    if (typeof x !== "number") return v;
    const rgbMax = maxesOf(config.constants.RGB || "rgb"), out = [...v];
    const at = { setRed: 0, setGreen: 1, setBlue: 2, setAlpha: 3 }[method];
    out[at] = clamp01(x / (at === 3 ? maxesOf(colourModes.mode)[3] : rgbMax[at]));
    return out;
  };
  const channel = (name) => (...args) => {
    const v = colourValue(args.length === 1 ? [args[0]] : args);
    if (!v) {
      violate("bad_argument", `${name}() could not read the colour it was given: pass a colour from color(), numbers, '#rrggbb', rgb()/hsl() or a CSS colour name`);
    }
    const rgbMax = maxesOf(config.constants.RGB || "rgb"), mode = colourModes.mode;
    const hsx = rgbToHsx(v[0], v[1], v[2]);
    const hueMode = mode === HSB ? HSB : HSL;
    switch (name) {
      case "red": return v[0] * rgbMax[0];
      case "green": return v[1] * rgbMax[1];
      case "blue": return v[2] * rgbMax[2];
      case "alpha": return v[3] * maxesOf(mode)[3];
      case "hue": return hsx.h * maxesOf(hueMode)[0];
      case "saturation": return (mode === HSB ? hsx.sb : hsx.sl) * maxesOf(hueMode)[1];
      case "brightness": return hsx.v * maxesOf(HSB)[2];
      default: return hsx.l * maxesOf(HSL)[2];
    }
  };

  // --- geometry returned by brush (Plot, Polygon): methods recorded against its handle ---
  const geometryProto = create(null);
  for (const m of config.geometryMethods) {
    defineProperty(geometryProto, m, {
      value: function (...args) {
        const ref = handles.get(this);
        if (!ref || ref.$h === undefined) violate("bad_argument", `.${m}() needs a shape returned by a brush call`);
        record("geometry", m, args, { target: ref });
        return this;
      },
    });
  }
  freeze(geometryProto);

  // --- vectors: plain maths here, angles in the sketch's angleMode like p5.Vector ----------
  const toRad = (a) => (state.angleDegrees ? a * (M.PI / 180) : a);
  const fromRad = (a) => (state.angleDegrees ? a * (180 / M.PI) : a);
  const num = (v) => (typeof v === "number" ? v : 0);
  const parts = (a, b, c) => {
    if (a instanceof Vector) return [a.x, a.y, a.z];
    if (isArray(a)) return [num(a[0]), num(a[1]), num(a[2])];
    if (a !== null && typeof a === "object") return [num(a.x), num(a.y), num(a.z)];
    if (typeof a === "number" && b === undefined && c === undefined) return [a, a, a];
    return [num(a), num(b), num(c)];
  };
  class Vector {
    constructor(x, y, z) { this.x = num(x); this.y = num(y); this.z = num(z); }
    set(a, b, c) { [this.x, this.y, this.z] = parts(a, b, c); return this; }
    copy() { return new Vector(this.x, this.y, this.z); }
    add(a, b, c) { const p = parts(a, b, c); this.x += p[0]; this.y += p[1]; this.z += p[2]; return this; }
    sub(a, b, c) { const p = parts(a, b, c); this.x -= p[0]; this.y -= p[1]; this.z -= p[2]; return this; }
    mult(a, b, c) { const p = parts(a, b, c); this.x *= p[0]; this.y *= p[1]; this.z *= p[2]; return this; }
    div(a, b, c) {
      const p = parts(a, b, c);
      if (p[0] === 0 || p[1] === 0 || (p[2] === 0 && this.z !== 0)) return this; // p5 warns and keeps the vector
      this.x /= p[0]; this.y /= p[1]; if (p[2] !== 0) this.z /= p[2];
      return this;
    }
    rem(a, b, c) { const p = parts(a, b, c); if (p[0]) this.x %= p[0]; if (p[1]) this.y %= p[1]; if (p[2]) this.z %= p[2]; return this; }
    magSq() { return this.x * this.x + this.y * this.y + this.z * this.z; }
    mag() { return M.sqrt(this.magSq()); }
    dot(a, b, c) { const p = parts(a, b, c); return this.x * p[0] + this.y * p[1] + this.z * p[2]; }
    cross(v) { const p = parts(v); return new Vector(this.y * p[2] - this.z * p[1], this.z * p[0] - this.x * p[2], this.x * p[1] - this.y * p[0]); }
    dist(v) { const p = parts(v); return M.hypot(p[0] - this.x, p[1] - this.y, p[2] - this.z); }
    normalize() { const m = this.mag(); if (m !== 0) this.mult(1 / m); return this; }
    setMag(n) { return this.normalize().mult(n); }
    limit(n) { const m = this.magSq(); if (m > n * n) this.div(M.sqrt(m)).mult(n); return this; }
    heading() { return fromRad(M.atan2(this.y, this.x)); }
    setHeading(a) { const m = this.mag(); this.x = m * M.cos(toRad(a)); this.y = m * M.sin(toRad(a)); return this; }
    rotate(a) {
      const h = M.atan2(this.y, this.x) + toRad(a), m = this.mag();
      this.x = M.cos(h) * m; this.y = M.sin(h) * m; return this;
    }
    angleBetween(v) {
      const p = parts(v), d = this.mag() * M.hypot(p[0], p[1], p[2]);
      return d ? fromRad(M.acos(M.min(1, M.max(-1, this.dot(v) / d)))) : 0;
    }
    lerp(a, b, c, amt) {
      if (a instanceof Vector || isArray(a)) { amt = b; [a, b, c] = parts(a); }
      this.x += (num(a) - this.x) * amt; this.y += (num(b) - this.y) * amt; this.z += (num(c) - this.z) * amt;
      return this;
    }
    array() { return [this.x, this.y, this.z]; }
    equals(a, b, c) { const p = parts(a, b, c); return this.x === p[0] && this.y === p[1] && this.z === p[2]; }
    toString() { return `vector[${this.x}, ${this.y}, ${this.z}]`; }
    static fromAngle(a, len = 1) { return new Vector(len * M.cos(toRad(a)), len * M.sin(toRad(a)), 0); }
    static random2D() { const a = seededMath() * M.PI * 2; return new Vector(M.cos(a), M.sin(a), 0); }
    static add(a, b) { return new Vector(...parts(a)).add(b); }
    static sub(a, b) { return new Vector(...parts(a)).sub(b); }
    static mult(a, n) { return new Vector(...parts(a)).mult(n); }
    static div(a, n) { return new Vector(...parts(a)).div(n); }
    static dist(a, b) { return new Vector(...parts(a)).dist(b); }
    static dot(a, b) { return new Vector(...parts(a)).dot(b); }
    static cross(a, b) { return new Vector(...parts(a)).cross(b); }
    static lerp(a, b, t) { return new Vector(...parts(a)).lerp(b, t); }
    static mag(a) { return new Vector(...parts(a)).mag(); }
    static normalize(a) { return new Vector(...parts(a)).normalize(); }
    static fromAngles(theta, phi, len = 1) {
      const t = toRad(theta), p = toRad(phi);
      return new Vector(len * M.sin(t) * M.sin(p), -len * M.cos(t), len * M.sin(t) * M.cos(p));
    }
    static random3D() {
      const a = seededMath() * M.PI * 2, z = seededMath() * 2 - 1, r = M.sqrt(1 - z * z);
      return new Vector(r * M.cos(a), r * M.sin(a), z);
    }
    static copy(a) { return new Vector(...parts(a)); }
    static rem(a, b) { return new Vector(...parts(a)).rem(b); }
    static magSq(a) { return new Vector(...parts(a)).magSq(); }
    static limit(a, n) { return new Vector(...parts(a)).limit(n); }
    static setMag(a, n) { return new Vector(...parts(a)).setMag(n); }
    static heading(a) { return new Vector(...parts(a)).heading(); }
    static setHeading(a, h) { return new Vector(...parts(a)).setHeading(h); }
    static rotate(a, angle) { return new Vector(...parts(a)).rotate(angle); }
    static angleBetween(a, b) { return new Vector(...parts(a)).angleBetween(b); }
    static reflect(a, n) { return new Vector(...parts(a)).reflect(n); }
    static equals(a, b) { return new Vector(...parts(a)).equals(b); }
    static slerp(a, b, t) { return new Vector(...parts(a)).slerp(b, t); }
    reflect(n) {
      const p = parts(n), m = M.hypot(p[0], p[1], p[2]) || 1, u = [p[0] / m, p[1] / m, p[2] / m];
      const d = 2 * (this.x * u[0] + this.y * u[1] + this.z * u[2]);
      this.x -= u[0] * d; this.y -= u[1] * d; this.z -= u[2] * d;
      return this;
    }
    slerp(v, t) {
      // p5's slerp for the 2D vectors sketches use: the angle and the length interpolated.
      const p = parts(v), h0 = M.atan2(this.y, this.x), h1 = M.atan2(p[1], p[0]);
      let d = h1 - h0;
      if (d > M.PI) d -= 2 * M.PI; else if (d < -M.PI) d += 2 * M.PI;
      const m = this.mag() + (M.hypot(p[0], p[1], p[2]) - this.mag()) * t, h = h0 + d * t;
      this.x = m * M.cos(h); this.y = m * M.sin(h); this.z += (p[2] - this.z) * t;
      return this;
    }
    clampToZero() { for (const k of ["x", "y", "z"]) if (M.abs(this[k]) < 1e-8) this[k] = 0; return this; }
  }

  // Math.random is the painting page's seeded stream (the same function the page uses),
  // after p5.brush has taken its four values at load. Until the sketch calls randomSeed() or
  // noiseSeed(), p5's random() and noise() draw on it, as they do in a page where the sketch
  // ran beside p5.brush.
  const seededMath = makeSeededRandom(config.seed);
  for (let i = 0; i < config.brushLoadDraws; i++) seededMath();
  defineProperty(Math, "random", { value: seededMath, writable: true, configurable: true });

  // --- p5 2.x's seeded random() and noise(), re-implemented exactly ------------------------
  const LCG_M = 4294967296, LCG_A = 1664525, LCG_C = 1013904223;
  let lcgState = null; // null: random() uses Math.random, as p5 does before randomSeed()
  let gaussianPrevious = false, y2 = 0;
  const lcg = () => { lcgState = (LCG_A * lcgState + LCG_C) % LCG_M; return lcgState / LCG_M; };
  const randomSeedNow = (seed) => { lcgState = (seed == null ? 0 : seed) >>> 0; gaussianPrevious = false; };
  function random(min, max) {
    const r = lcgState === null ? seededMath() : lcg();
    if (min === undefined) return r;
    if (max === undefined) return isArray(min) ? min[M.floor(r * min.length)] : r * min;
    if (min > max) { const t = min; min = max; max = t; }
    return r * (max - min) + min;
  }
  function randomGaussian(mean, sd = 1) {
    let y1;
    if (gaussianPrevious) { y1 = y2; gaussianPrevious = false; } else {
      let x1, x2, w;
      do { x1 = random(2) - 1; x2 = random(2) - 1; w = x1 * x1 + x2 * x2; } while (w >= 1);
      w = M.sqrt(-2 * M.log(w) / w);
      y1 = x1 * w; y2 = x2 * w; gaussianPrevious = true;
    }
    return y1 * sd + (mean || 0);
  }
  const PERLIN_YWRAPB = 4, PERLIN_YWRAP = 1 << PERLIN_YWRAPB, PERLIN_ZWRAPB = 8;
  const PERLIN_ZWRAP = 1 << PERLIN_ZWRAPB, PERLIN_SIZE = 4095;
  let perlinOctaves = 4, perlinFalloff = 0.5;
  let perlin = null; // filled from Math.random at the first noise(), as p5 does
  const noiseSeedNow = (seed) => {
    let z = (seed == null ? 0 : seed) >>> 0;
    perlin = new Array(PERLIN_SIZE + 1);
    for (let i = 0; i < PERLIN_SIZE + 1; i++) { z = (LCG_A * z + LCG_C) % LCG_M; perlin[i] = z / LCG_M; }
  };
  const scaledCosine = (i) => 0.5 * (1.0 - M.cos(i * M.PI));
  function noise(x, y = 0, z = 0) {
    if (perlin === null) {
      perlin = new Array(PERLIN_SIZE + 1);
      for (let i = 0; i < PERLIN_SIZE + 1; i++) perlin[i] = seededMath();
    }
    if (x < 0) x = -x;
    if (y < 0) y = -y;
    if (z < 0) z = -z;
    let xi = M.floor(x), yi = M.floor(y), zi = M.floor(z);
    let xf = x - xi, yf = y - yi, zf = z - zi;
    let r = 0, ampl = 0.5;
    for (let o = 0; o < perlinOctaves; o++) {
      let of = xi + (yi << PERLIN_YWRAPB) + (zi << PERLIN_ZWRAPB);
      const rxf = scaledCosine(xf), ryf = scaledCosine(yf);
      let n1 = perlin[of & PERLIN_SIZE];
      n1 += rxf * (perlin[(of + 1) & PERLIN_SIZE] - n1);
      let n2 = perlin[(of + PERLIN_YWRAP) & PERLIN_SIZE];
      n2 += rxf * (perlin[(of + PERLIN_YWRAP + 1) & PERLIN_SIZE] - n2);
      n1 += ryf * (n2 - n1);
      of += PERLIN_ZWRAP;
      n2 = perlin[of & PERLIN_SIZE];
      n2 += rxf * (perlin[(of + 1) & PERLIN_SIZE] - n2);
      let n3 = perlin[(of + PERLIN_YWRAP) & PERLIN_SIZE];
      n3 += rxf * (perlin[(of + PERLIN_YWRAP + 1) & PERLIN_SIZE] - n3);
      n2 += ryf * (n3 - n2);
      n1 += scaledCosine(zf) * (n2 - n1);
      r += n1 * ampl;
      ampl *= perlinFalloff;
      xi <<= 1; xf *= 2; yi <<= 1; yf *= 2; zi <<= 1; zf *= 2;
      if (xf >= 1.0) { xi++; xf--; }
      if (yf >= 1.0) { yi++; yf--; }
      if (zf >= 1.0) { zi++; zf--; }
    }
    return r;
  }

  // --- the p5 facade ------------------------------------------------------------------------
  const p5 = create(null); // what the sketch's global p5 names resolve to
  // What chainable p5 calls return: the instance, whose off-limits members trip like globals.
  const instance = new Proxy(create(null), {
    get(_t, key) {
      if (typeof key !== "string") return undefined;
      if (key in p5) return p5[key];
      const code = config.shadowed[key] || (config.p5[key] && config.p5[key] !== "helper" ? config.p5[key] : null);
      if (code) violate(code, `${key} is not available to sketches${envSays(key)}: ${why(code)}`);
      return undefined;
    },
    set(_t, key) { return violate("forbidden_api", `the p5 instance is read-only (${String(key)})`); },
  });
  const recorded = (name, value) => function (...args) { record("p5", name, args); return value === undefined ? instance : value; };
  for (const name of config.replayP5) p5[name] = recorded(name);
  p5.angleMode = function (mode) {
    if (mode === undefined) return state.angleDegrees ? config.constants.DEGREES : config.constants.RADIANS;
    if (mode === config.constants.DEGREES || mode === config.constants.RADIANS) state.angleDegrees = mode === config.constants.DEGREES;
    record("p5", "angleMode", [mode]);
    return undefined;
  };
  p5.createCanvas = function (w, h, kind) {
    const W = config.width, H = config.height;
    if (kind !== config.constants.WEBGL) violate("no_webgl_canvas", `createCanvas needs WEBGL as its third argument: createCanvas(${W}, ${H}, WEBGL)`);
    if (w !== W || h !== H) violate("canvas_size", `the canvas must be ${W}x${H}; got ${w}x${h}`);
    if (state.canvas) violate("canvas_size", "createCanvas() may be called once; the canvas cannot be remade or resized");
    state.canvas = true;
    record("canvas", "createCanvas", []);
    return instance;
  };
  p5.pixelDensity = function (d) {
    if (d === undefined) return 1;
    if (d !== 1) violate("canvas_size", "pixelDensity() must stay 1 here: remove the call or use pixelDensity(1)");
    return undefined;
  };
  p5.noLoop = () => { state.looping = false; };
  p5.loop = () => { state.looping = true; };
  p5.isLooping = () => state.looping;
  p5.redraw = () => undefined; // frames are counted here: every draw() runs in order anyway
  // Frames are not paced: a sketch is captured after maxFrames frames whatever rate it asks.
  p5.frameRate = (fps) => (fps === undefined ? 60 : undefined);
  p5.describe = () => undefined; // an accessibility description: nothing to paint
  p5.describeElement = () => undefined;
  p5.print = (...args) => { console.log(...args); };
  p5.millis = () => (state.frame * 1000) / 60; // deterministic: the frames so far at 60 fps
  p5.random = random;
  p5.randomGaussian = randomGaussian;
  p5.randomSeed = (seed) => { randomSeedNow(seed); record("p5", "randomSeed", [seed]); };
  p5.noise = noise;
  p5.noiseSeed = (seed) => { noiseSeedNow(seed); record("p5", "noiseSeed", [seed]); };
  p5.noiseDetail = (lod, falloff = 0.5) => { if (lod > 0) perlinOctaves = lod; if (falloff > 0) perlinFalloff = falloff; };
  p5.color = (...args) => makeColour("color", args);
  p5.lerpColor = (a, b, t) => makeColour("lerpColor", [a, b, t]);
  // p5 2.x defines paletteLerp as color() and lerpColor() composed: recorded as those calls.
  p5.paletteLerp = (stops, amt) => {
    if (amt < stops[0][1]) return p5.color(stops[0][0]);
    for (let i = 1; i < stops.length; i++) {
      const from = stops[i - 1], to = stops[i]; // no iterator: a planted one must not run here
      if (amt < to[1]) return p5.lerpColor(p5.color(from[0]), p5.color(to[0]), (amt - from[1]) / (to[1] - from[1]));
    }
    return p5.color(stops[stops.length - 1][0]);
  };
  for (const name of ["red", "green", "blue", "alpha", "hue", "saturation", "brightness", "lightness"]) p5[name] = channel(name);
  p5.colorMode = function (mode, ...maxes) {
    if (mode === config.constants.RGB || mode === HSB || mode === HSL) {
      colourModes.mode = mode;
      const n = maxes.filter((x) => typeof x === "number");
      if (n.length === 1) colourModes.maxes[mode] = [n[0], n[0], n[0], n[0]];
      else if (n.length >= 3) colourModes.maxes[mode] = [n[0], n[1], n[2], n.length > 3 ? n[3] : maxesOf(mode)[3]];
    }
    record("p5", "colorMode", [mode, ...maxes]);
    return undefined;
  };
  // Points and tangents on curves: maths that draws nothing (p5's formulas).
  p5.bezierPoint = (a, b, c, d, t) => { const u = 1 - t; return u * u * u * a + 3 * u * u * t * b + 3 * u * t * t * c + t * t * t * d; };
  p5.bezierTangent = (a, b, c, d, t) => {
    const u = 1 - t;
    return 3 * d * t * t - 3 * c * t * t + 6 * c * u * t - 6 * b * u * t + 3 * b * u * u - 3 * a * u * u;
  };
  // p5 2.x's splinePoint/splineTangent at the default tightness 0 (p5 1.x's curvePoint).
  p5.splinePoint = (a, b, c, d, t) => {
    const t3 = t * t * t, t2 = t * t;
    return a * (-0.5 * t3 + t2 - 0.5 * t) + b * (1.5 * t3 - 2.5 * t2 + 1) + c * (-1.5 * t3 + 2 * t2 + 0.5 * t) + d * (0.5 * t3 - 0.5 * t2);
  };
  p5.splineTangent = (a, b, c, d, t) => {
    const t2 = t * t;
    return a * (-1.5 * t2 + 2 * t - 0.5) + b * (4.5 * t2 - 5 * t) + c * (-4.5 * t2 + 4 * t + 0.5) + d * (1.5 * t2 - t);
  };
  p5.createVector = (x, y, z) => new Vector(x, y, z);
  // Maths, as p5 2.x defines it (trigonometry in the current angleMode).
  p5.sin = (a) => M.sin(toRad(a)); p5.cos = (a) => M.cos(toRad(a)); p5.tan = (a) => M.tan(toRad(a));
  p5.asin = (r) => fromRad(M.asin(r)); p5.acos = (r) => fromRad(M.acos(r)); p5.atan = (r) => fromRad(M.atan(r));
  p5.atan2 = (y, x) => fromRad(M.atan2(y, x));
  p5.degrees = (a) => a * (180 / M.PI); p5.radians = (a) => a * (M.PI / 180);
  p5.constrain = (n, lo, hi) => M.max(M.min(n, hi), lo);
  p5.map = (n, a, b, c, d, within) => {
    const v = ((n - a) / (b - a)) * (d - c) + c;
    if (!within) return v;
    return c < d ? p5.constrain(v, c, d) : p5.constrain(v, d, c);
  };
  p5.lerp = (a, b, t) => t * (b - a) + a;
  p5.dist = (...a) => (a.length === 4 ? M.hypot(a[2] - a[0], a[3] - a[1]) : M.hypot(a[3] - a[0], a[4] - a[1], a[5] - a[2]));
  p5.mag = (x, y) => M.hypot(x, y);
  p5.norm = (n, lo, hi) => p5.map(n, lo, hi, 0, 1);
  p5.sq = (n) => n * n; p5.sqrt = M.sqrt; p5.pow = M.pow; p5.abs = M.abs; p5.ceil = M.ceil;
  p5.floor = M.floor; p5.exp = M.exp; p5.log = M.log;
  p5.round = (n, d) => { if (!d) return M.round(n); const k = M.pow(10, d); return M.round(n * k) / k; };
  p5.min = (...a) => (isArray(a[0]) ? M.min(...a[0]) : M.min(...a));
  p5.max = (...a) => (isArray(a[0]) ? M.max(...a[0]) : M.max(...a));
  p5.fract = (x) => { const s = M.sign(x); const a = M.abs(x); return s * (a - M.floor(a)); };
  p5.int = (v) => (isArray(v) ? v.map((x) => p5.int(x)) : typeof v === "string" ? parseInt(v, 10) : typeof v === "boolean" ? Number(v) : M.trunc(v));
  p5.float = (v) => (isArray(v) ? v.map((x) => p5.float(x)) : parseFloat(v));
  p5.str = (v) => (isArray(v) ? v.map((x) => String(x)) : String(v));
  p5.boolean = (v) => (typeof v === "string" ? v.toLowerCase() === "true" : !!v);
  p5.hex = (n, digits = 8) => { const h = ((n >>> 0).toString(16)).toUpperCase(); return h.padStart(digits, "0").slice(-digits); };
  p5.unhex = (s) => parseInt(s, 16);
  const nfOne = (n, left, right) => {
    let s = right === undefined ? String(M.abs(n)) : M.abs(n).toFixed(right);
    const [i, f] = s.split(".");
    s = left ? i.padStart(left, "0") + (f !== undefined ? "." + f : "") : s;
    return (n < 0 ? "-" : "") + s;
  };
  p5.nf = (n, l, r) => (isArray(n) ? n.map((x) => nfOne(x, l, r)) : nfOne(n, l, r));
  p5.nfc = (n, r) => Number(n).toLocaleString("en-US", r === undefined ? {} : { minimumFractionDigits: r, maximumFractionDigits: r });
  p5.nfp = (n, l, r) => (n >= 0 ? "+" : "") + nfOne(n, l, r);
  p5.nfs = (n, l, r) => (n >= 0 ? " " : "") + nfOne(n, l, r);
  p5.splitTokens = (s, d = " \t\n\r") => s.split(new RegExp("[" + d.replace(/[\\\]^-]/g, "\\$&") + "]+")).filter((t) => t);
  p5.shuffle = (array, inPlace) => {
    const a = inPlace ? array : array.slice();
    for (let i = a.length; i > 1; i--) { const j = M.floor(random(0, 1) * i); const t = a[i - 1]; a[i - 1] = a[j]; a[j] = t; }
    return a;
  };
  p5.append = (array, value) => { array.push(value); return array; }; // p5 1.x's, still common
  // p5 1.x's other array helpers, gone from 2.x: the message says what to write instead.
  for (const [name, instead] of config.removedHelpers) {
    p5[name] = () => violate("p5_forbidden", `${name}() is not part of p5 2.x: ${instead}`);
  }
  const clock = () => 0;
  for (const name of ["day", "hour", "minute", "month", "second", "year"]) p5[name] = clock;
  p5.P5Vector = Vector;

  // Off-limits p5 functions: reported with the gate's code and the line, never a silent no-op.
  for (const name of ownNames(config.p5)) {
    const code = config.p5[name];
    if (name in p5) continue;
    p5[name] = code === "helper"
      ? () => violate("p5_forbidden", `${name}() is not supported in the sketch realm; compute it with JavaScript's own Math`)
      : () => violate(code, `${name}() is not allowed${envSays(name)}: ${why(code)}`);
  }

  // --- the brush facade -------------------------------------------------------------------
  const brush = create(null);
  const painting = new Set(config.paintingCalls);
  // A field function runs here, when p5.brush would run it (brush.field() of a field not yet
  // made, brush.refreshField(t)): its grid of angles goes with that call to the page.
  const fields = new Map(); // name -> {fn, made}
  let currentField = null;
  const COLS = M.round((2 * config.width) / (config.width * 0.01));
  const ROWS = M.round((2 * config.height) / (config.width * 0.01));
  const fieldGrid = (name, t) => {
    const grid = [];
    for (let c = 0; c < COLS; c++) grid[c] = new F32(ROWS);
    const out = fields.get(name).fn(t, grid);
    const flat = new F32(COLS * ROWS);
    for (let c = 0; c < COLS; c++) {
      const col = out && out[c];
      if (col === null || col === undefined) {
        violate("runtime_error", `brush.addField("${name}", fn): fn(t, field) must fill the field it is given (${COLS} columns of ${ROWS} angles) and return it`);
      }
      for (let r = 0; r < ROWS; r++) flat[c * ROWS + r] = col[r];
    }
    return flat;
  };
  const fieldCall = (name, args) => {
    if (name === "addField") {
      if (typeof args[1] !== "function") violate("bad_argument", "brush.addField(name, fn) needs fn(t, field) returning the field grid of angles");
      fields.set(args[0], rec({ fn: args[1], made: false }));
      record("brush", name, [args[0], args[2]]);
      return true;
    }
    if (name === "field" || name === "wiggle") currentField = name === "field" ? args[0] : "hand";
    const own = fields.get(currentField);
    if (name === "field" && own && !own.made) {
      const grid = fieldGrid(currentField, 0);
      own.made = true;
      record("brush", name, args, { grid, fieldName: currentField });
      return true;
    }
    if (name === "refreshField" && own) {
      record("brush", name, args, { grid: fieldGrid(currentField, args[0] === undefined ? 0 : args[0]), fieldName: currentField });
      return true;
    }
    return false;
  };
  // A custom brush's functions run here, when p5.brush would run them: `tip(_m)` at once (a
  // "custom" brush's tip is drawn when it is added), on a surface that records what it draws;
  // a pressure curve given as a function is sampled over [0, 1]. The page replays both.
  const tipSurface = (brushName, calls) => {
    const methods = create(null);
    const surface = new Proxy(create(null), {
      get(_t, key) {
        if (key === "width" || key === "height") return 500; // p5.brush's tip surface
        if (typeof key === "string" && key in methods) return methods[key];
        return violate("bad_argument", `the tip of brush "${brushName}" used _m.${String(key)}; a tip may draw with ${config.tipMethods.join(", ")}`);
      },
      set() { return violate("bad_argument", `the tip of brush "${brushName}" is drawn with calls on _m, not by setting its properties`); },
    });
    for (const m of config.tipMethods) {
      methods[m] = (...a) => {
        guardBuiltins(`_m.${m}`); // the tip is the sketch's code, run inside brush.add
        if (calls.length >= config.maxTipCalls) violate("bad_argument", `the tip of brush "${brushName}" drew more than ${config.maxTipCalls} shapes; draw it with fewer`);
        push(calls, rec({ name: m, args: encodeArgs(a, `_m.${m}()`) }));
        return surface;
      };
    }
    return surface;
  };
  const sampled = (brushName, fn) => {
    const n = config.pressureSamples - 1;
    const out = new F64(n + 1);
    for (let i = 0; i <= n; i++) {
      const v = fn(i / n);
      if (typeof v !== "number" || !isFinite(v)) violate("bad_argument", `the pressure curve of brush "${brushName}" gave ${String(v)} at ${i / n}; return a number for every x from 0 to 1`);
      out[i] = v;
    }
    return out;
  };
  const customBrush = (args) => {
    const params = args[1];
    if (params === null || typeof params !== "object" || isArray(params)) return false;
    // An "image" brush's tip is fetched from its URL by the page: a request, refused here
    // with the line, rather than a failed load the page would report without one.
    if (params.type === "image" || params.image !== undefined) {
      violate("forbidden_api", `brush "${String(args[0])}" loads its tip from an image (${apply(slice, String(params.image && params.image.src), [0, 120])}): a sketch may not load files or reach the network. Draw the tip instead: type: "custom", tip: (_m) => { ... }. ${why("forbidden_api")}`);
    }
    const tip = params.tip, pressure = params.pressure;
    const curve = pressure !== null && typeof pressure === "object" ? pressure.curve : undefined;
    if (typeof tip !== "function" && typeof pressure !== "function" && typeof curve !== "function") return false;
    const brushName = String(args[0]);
    const plain = create(null), extra = create(null);
    for (const k of ownNames(params)) if (k !== "tip" && k !== "pressure") plain[k] = params[k];
    if (typeof pressure === "function") {
      extra.pressure = rec({ at: "pressure", samples: sampled(brushName, pressure) });
    } else if (typeof curve === "function") {
      const rest = create(null);
      for (const k of ownNames(pressure)) if (k !== "curve") rest[k] = pressure[k];
      plain.pressure = rest;
      extra.pressure = rec({ at: "curve", samples: sampled(brushName, curve) });
    } else if (pressure !== undefined) plain.pressure = pressure;
    // p5.brush draws a tip only for a "custom" brush; any other ignores it, as here.
    if (typeof tip === "function" && params.type === "custom") {
      const calls = [];
      tip(tipSurface(brushName, calls));
      extra.tip = calls;
    }
    const callArgs = [args[0], plain];
    for (let i = 2; i < args.length; i++) push(callArgs, args[i]);
    record("brush", "add", callArgs, extra);
    return true;
  };
  // Names that only answer (lists, a weighted pick) or are the page's plumbing: nothing to paint.
  let wRandState = (config.seed ^ 0x9e3779b9) >>> 0;
  const answers = {
    listFields: () => { const names = [...config.builtinFields]; for (const k of fields.keys()) if (names.indexOf(k) < 0) names.push(k); return names; },
    box: () => [...config.builtinBrushes],
    load: () => undefined,
    instance: () => undefined,
    clip: (x) => x,
    wRand: (weights) => {
      // p5.brush draws this from its own generator, known only in the page: a seeded one here.
      wRandState = (wRandState + 0x6d2b79f5) >>> 0;
      let z = wRandState;
      z = M.imul(z ^ (z >>> 15), z | 1); z ^= z + M.imul(z ^ (z >>> 7), z | 61);
      const u = ((z ^ (z >>> 14)) >>> 0) / 4294967296;
      let total = 0;
      for (const k of ownNames(weights || {})) total += weights[k];
      let at = u * total;
      for (const k of ownNames(weights || {})) { at -= weights[k]; if (at < 0) return isNaN(k) ? k : parseInt(k, 10); }
      return undefined;
    },
  };
  for (const name of config.brushMethods) {
    brush[name] = function (...args) {
      guardBuiltins(`brush.${name}`);
      if (name in answers) return answers[name](...args);
      if (fieldCall(name, args)) return undefined;
      if (name === "add" && customBrush(args)) return undefined;
      if (painting.has(name)) state.paints++;
      if (config.geometryCalls.indexOf(name) < 0) { record("brush", name, args); return undefined; }
      const [shape, id] = newHandle("$h", geometryProto);
      record("brush", name, args, { id });
      if (name === "circle") {
        // [plot, x, y]: the offsets are brush's own random numbers, known only in the page.
        const [x] = newHandle("$h", geometryProto), [y] = newHandle("$h", geometryProto);
        handles.set(shape, rec({ $h: id, part: 0 }));
        handles.set(x, rec({ $h: id, part: 1 }));
        handles.set(y, rec({ $h: id, part: 2 }));
        return [shape, x, y];
      }
      return shape;
    };
  }
  const brushView = new Proxy(brush, {
    get(target, prop) {
      if (typeof prop !== "string") return undefined;
      if (prop in target) return target[prop];
      if (prop === "Polygon" || prop === "Plot" || prop === "Position") {
        return violate("unknown_brush_method", `brush.${prop} cannot be built by hand here; use the shapes brush calls return`);
      }
      const known = config.knownBrush.indexOf(prop) >= 0;
      return () => violate("unknown_brush_method", known
        ? `brush.${prop}() is not on this profile's allowlist (${config.brushMethods.join(", ")})`
        : `brush.${prop}() does not exist in p5.brush; allowed: ${config.brushMethods.join(", ")}`);
    },
    set() { return violate("forbidden_api", "the brush object is read-only"); },
    defineProperty() { return violate("forbidden_api", "the brush object is read-only"); },
  });

  // --- console: captured into the job's console -------------------------------------------
  const show = (v) => {
    if (typeof v === "string") return v;
    try { return typeof v === "object" && v !== null ? JSON.stringify(v) : String(v); } catch (_e) { return String(typeof v); }
  };
  const say = (kind) => (...args) => {
    if (consoleLines.length >= 50) return;
    let text = "";
    for (let i = 0; i < args.length; i++) text += (i ? " " : "") + show(args[i]);
    push(consoleLines, `${kind}: ${apply(slice, text, [0, 500])}`);
  };
  const consoleFacade = freeze(assign(create(null), {
    log: say("log"), info: say("info"), warn: say("warning"), error: say("error"), debug: say("debug"),
  }));

  // --- install the sketch's globals --------------------------------------------------------
  for (const name of ownNames(config.shadowed)) if (!(name in p5) && name !== "brush") tripwire(name, config.shadowed[name]);
  // Whatever else the worker had (importScripts, WorkerNavigator, close, onmessage...) trips
  // too: a touch of anything that is not JavaScript's own is an attempt, named or not.
  for (const name of removed) if (!(name in p5) && !(name in config.shadowed) && name !== "brush") tripwire(name, "forbidden_api");
  // JavaScript's own globals stay readable; assigning one (Math = fake) is an attempt too.
  for (const name of config.intrinsics) {
    const d = Object.getOwnPropertyDescriptor(scope, name);
    if (name in config.shadowed || !d || !d.configurable || !("value" in d)) continue; // tripwires, NaN...
    const value = d.value;
    const trip = () => violate("tamper", `${name} is JavaScript's own and may not be reassigned: keep your own value in a variable of another name`);
    defineProperty(scope, name, { get: () => value, set: trip, configurable: true, enumerable: false });
  }
  for (const name of ownNames(p5)) if (name !== "P5Vector") define(name, p5[name]);
  for (const name of ownNames(config.constants)) define(name, config.constants[name]);
  define("brush", brushView);
  define("console", consoleFacade);
  // Two of JavaScript's everyday helpers the env's page has: structuredClone copies data (the
  // platform's own, given the value only), and performance.now() is the sketch's own clock,
  // as millis() is, so a program that reads it paints the same picture on every run.
  define("structuredClone", (value) => apply(nativeClone, scope, [value]));
  define("performance", freeze(assign(create(null), { now: () => (state.frame * 1000) / 60, timeOrigin: 0 })));
  define("p5", freeze(assign(create(null), { Vector })));
  define("width", config.width);
  define("height", config.height);
  define("windowWidth", config.width);
  define("windowHeight", config.height);
  define("deltaTime", 1000 / 60);
  for (const name of ["mouseX", "mouseY", "pmouseX", "pmouseY"]) define(name, 0);
  defineProperty(scope, "frameCount", { get: () => state.frame, configurable: true });

  // --- the Function constructors: every route to one (fn.constructor, an async function's,
  // a generator's) ends in this trap, which records the attempt; the CSP would only throw.
  const constructorTrap = function Function() {
    return violate("forbidden_api", `the Function constructor (code built from a string) is not allowed${envSays("Function")}: write the code itself. ${why("forbidden_api")}`);
  };
  for (const fn of [function () {}, ...hiddenFunctions]) {
    defineProperty(protoOf(fn), "constructor", { value: constructorTrap, writable: true, configurable: true, enumerable: false });
  }

  // --- the built-ins as they are now: any later change is the sketch's (realm_integrity.js)
  const integrity = makeIntegrity(intrinsicRoots, sketchText, 2);
  let tampered = false;
  const checkIntegrity = (when, full) => {
    const found = integrity.changes(10, full === true);
    if (found.length) tampered = true;
    for (let i = 0; i < found.length; i++) {
      const c = found[i];
      const what = c.key === "[[Prototype]]" || c.key === "[[Extensible]]" ? c.path : `${c.path}.${c.key}`;
      note(rec({ code: "tamper", line: c.line, message: `the sketch ${c.what} ${what} (seen ${when}): JavaScript's built-ins are shared by all code and may not be changed, even when the change fails or is undone; write a helper function of your own instead` }));
    }
  };
  // Our recorder runs on the realm's built-ins, so they are checked before each call it takes,
  // and once the sketch has changed one, no call of ours runs on them again: a planted method
  // cannot hang or steer the recorder, and the change is the verdict, posted when found.
  guardBuiltins = (name) => {
    if (!tampered) checkIntegrity(`before ${name}()`);
    if (!tampered) return;
    const err = new ErrorCtor("the sketch changed JavaScript's built-ins; nothing more is recorded");
    apply(weakAdd, refusals, [err]);
    throw err;
  };

  // --- running it ---------------------------------------------------------------------------
  const describe = (err) => {
    if (apply(weakHas, refusals, [err])) return null; // already recorded with its own code
    let name = "", message = "", stack = null;
    try {
      if (err !== null && (typeof err === "object" || typeof err === "function")) {
        if (typeof err.name === "string") name = err.name;
        if (typeof err.message === "string") message = err.message;
        if (typeof err.stack === "string") stack = err.stack;
      } else message = String(err);
    } catch (_e) { /* a value that throws when asked is still an error */ }
    if (name === "EvalError") return rec({ code: "forbidden_api", message: `eval and new Function are not allowed${envSays("eval")}: ${why("forbidden_api")}`, line: lineOf(stack) });
    return rec({ code: "runtime_error", message: apply(slice, (name ? name + ": " : "") + (message || "the sketch threw a value that is not an Error"), [0, 500]), line: lineOf(stack) });
  };
  const failWith = (err) => {
    const v = describe(err);
    if (v && violations.length < 50) push(violations, v);
    if (violations.length === 0) push(violations, rec({ code: "runtime_error", message: "the sketch stopped with an error", line: null }));
  };
  let answered = false;
  const answer = (status) => {
    if (answered) return;
    answered = true;
    post({ status, violations, console: consoleLines, frames, paints: state.paints, canvas: state.canvas });
  };
  // Backstop: whatever the worker's CSP blocks (an import(), eval by a route we did not trap)
  // is reported by the browser itself, with the line.
  listen("securitypolicyviolation", (event) => {
    const line = event.sourceFile === config.scriptUrl && event.lineNumber > config.prefixLines ? event.lineNumber - config.prefixLines : null;
    note(rec({ code: "forbidden_api", message: `the sketch tried to load or evaluate code (${event.effectiveDirective}, ${event.blockedURI}): ${why("forbidden_api")}`, line }));
  });
  listen("unhandledrejection", (event) => {
    event.preventDefault();
    failWith(event.reason);
  });

  // Runs one sketch function; a returned thenable (an async setup/draw) is awaited while the
  // frame is still open. A `then` getter is the sketch's own code, running in this realm.
  const runFrame = async (fn, where) => {
    state.running = true;
    try {
      const result = fn();
      if (result !== null && (typeof result === "object" || typeof result === "function")) {
        checkIntegrity(`after ${where}`); // before awaiting what the sketch returned
        await result;
      }
    } finally {
      state.running = false;
      checkIntegrity(`after ${where}`);
    }
  };

  const main = async () => {
    let entry;
    state.running = true;
    try { entry = factory(); } finally { state.running = false; checkIntegrity("after the sketch's top level"); }
    const setup = entry && entry.setup, draw = entry && entry.draw;
    if (typeof setup !== "function") {
      push(violations, rec({ code: "no_setup", message: why("no_setup"), line: null }));
      return;
    }
    await runFrame(setup, "setup()");
    if (typeof draw === "function") {
      for (let k = 1; k <= config.maxFrames; k++) {
        state.frame = k;
        frames[k] = [];
        await runFrame(draw, `draw() (frame ${k})`);
        if (!state.looping) break;
      }
    }
    // Callbacks the sketch queued run now, with no frame open: they are reported.
    await new PromiseCtor((resolve) => macrotask(resolve, 0));
    checkIntegrity("after the sketch had run", true);
  };
  apply(promiseThen, main(), [
    () => answer(violations.length ? "error" : "done"),
    (err) => { failWith(err); answer("error"); },
  ]);
})
