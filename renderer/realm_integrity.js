// refpool sketch realm: JavaScript's built-ins as they were at boot, and every change since.
//
// renderer/job.py passes this function expression to the realm's bootstrap
// (renderer/sketch_worker.js), which calls it once, after its own set-up and before any
// sketch code. It walks every intrinsic reachable from JavaScript's own globals (and the
// hidden ones: %AsyncFunction%, the iterator prototypes, %TypedArray%...) and keeps each
// object's prototype, extensibility and every own property's descriptor. `changes()` then
// compares them all: any difference is the sketch's attempt to change a built-in (a planted
// `bind`, a `then` on Object.prototype, a replaced Math.random), whether or not the program
// caught an error or undid nothing. By construction: no list of "dangerous" names.
// Everything here runs on primitives captured before the sketch existed.
(function makeIntegrity(roots, sketchText, linesBefore) {
  "use strict";
  const R = Reflect;
  const apply = R.apply, ownKeys = R.ownKeys, describe = R.getOwnPropertyDescriptor;
  const protoOf = R.getPrototypeOf, isExtensible = R.isExtensible, define = R.defineProperty;
  const same = Object.is, hasOwn = Object.prototype.hasOwnProperty;
  const MapCtor = Map, mapSet = Map.prototype.set, mapHas = Map.prototype.has;
  const StringCtor = String, indexOf = String.prototype.indexOf, charCodeAt = String.prototype.charCodeAt;
  const symbolName = describe(Symbol.prototype, "description").get; // "Symbol.iterator"
  const FIELDS = ["value", "get", "set", "writable", "enumerable", "configurable"];
  const add = (list, item) => {
    define(list, list.length, { __proto__: null, value: item, writable: true, enumerable: true, configurable: true });
  };
  const field = (d, k) => (apply(hasOwn, d, [k]) ? d[k] : undefined);
  const fields = (d) => {
    const out = [];
    for (let f = 0; f < FIELDS.length; f++) add(out, field(d, FIELDS[f]));
    return out;
  };
  const isObject = (v) => v !== null && (typeof v === "object" || typeof v === "function");
  // The words a sketch writes to reach a key: its name, or a symbol's (`[Symbol.iterator] =`).
  const hintOf = (key) => {
    const words = typeof key === "symbol" ? apply(symbolName, key, []) : key;
    return typeof words === "string" && words ? [words] : [];
  };
  const nameOf = (key) => (typeof key === "symbol" ? "[" + StringCtor(key) + "]" : key);

  // --- the snapshot: breadth first, so each object keeps its shortest name ------------------
  const entries = [];
  const seen = new MapCtor();
  const queue = [];
  for (let i = 0; i < roots.length; i++) add(queue, roots[i]);
  // A constructor's prototype is named after it (Function.prototype, not Object.[[Prototype]]).
  for (let i = 0; i < roots.length; i++) {
    const d = typeof roots[i][1] === "function" ? describe(roots[i][1], "prototype") : undefined;
    if (d && isObject(field(d, "value"))) add(queue, [roots[i][0] + ".prototype", field(d, "value")]);
  }
  for (let q = 0; q < queue.length; q++) {
    const path = queue[q][0], obj = queue[q][1];
    if (!isObject(obj) || apply(mapHas, seen, [obj])) continue;
    apply(mapSet, seen, [obj, true]);
    const keys = ownKeys(obj);
    const descs = [];
    for (let i = 0; i < keys.length; i++) {
      const was = fields(describe(obj, keys[i]));
      add(descs, was);
      for (let f = 0; f < 3; f++) if (isObject(was[f])) add(queue, [path + "." + nameOf(keys[i]), was[f]]);
    }
    const proto = protoOf(obj);
    if (isObject(proto)) add(queue, [path + ".[[Prototype]]", proto]);
    // A built-in method has only `length` and `name`: those are compared in the full check
    // at the end of the run, not after every frame.
    let method = typeof obj === "function";
    for (let i = 0; i < keys.length; i++) if (keys[i] !== "length" && keys[i] !== "name") method = false;
    add(entries, { __proto__: null, obj, path, proto, extensible: isExtensible(obj), keys, index: null, descs, method });
  }

  // --- where in the sketch a change was most likely written -------------------------------
  const isWordCode = (c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 36 || c === 95;
  const lineOfName = (names) => {
    for (let n = 0; n < names.length; n++) {
      const name = names[n];
      let first = -1, best = -1;
      let at = apply(indexOf, sketchText, [name]);
      while (at >= 0 && best < 0) {
        const end = at + name.length;
        if (!isWordCode(apply(charCodeAt, sketchText, [at - 1])) && !isWordCode(apply(charCodeAt, sketchText, [end]))) {
          if (first < 0) first = at;
          let j = end;
          while (sketchText[j] === " ") j++;
          const quoted = sketchText[at - 1] === '"' || sketchText[at - 1] === "'" || sketchText[at - 1] === "`";
          if ((sketchText[j] === "=" && sketchText[j + 1] !== "=") || quoted) best = at;
        }
        at = apply(indexOf, sketchText, [name, at + 1]);
      }
      const found = best >= 0 ? best : first;
      if (found >= 0) {
        let line = 1;
        for (let i = 0; i < found; i++) if (sketchText[i] === "\n") line++;
        return line > linesBefore ? line - linesBefore : null;
      }
    }
    return null;
  };

  // --- the comparison ------------------------------------------------------------------------
  const reported = new MapCtor();
  const changes = (limit, full) => {
    const out = [];
    const report = (entry, key, what, hints) => {
      const id = entry.path + "\u0000" + nameOf(key);
      if (out.length >= limit || apply(mapHas, reported, [id])) return;
      apply(mapSet, reported, [id, true]);
      add(out, { __proto__: null, path: entry.path, key: typeof key === "symbol" ? nameOf(key) : key, what, line: lineOfName(hints) });
    };
    for (let e = 0; e < entries.length && out.length < limit; e++) {
      const entry = entries[e], obj = entry.obj;
      if (entry.method && !full) continue;
      if (protoOf(obj) !== entry.proto) report(entry, "[[Prototype]]", "changed the prototype of", ["setPrototypeOf", "__proto__"]);
      if (isExtensible(obj) !== entry.extensible) report(entry, "[[Extensible]]", "froze or sealed", ["preventExtensions", "freeze", "seal"]);
      const keys = entry.keys;
      for (let i = 0; i < keys.length; i++) {
        const d = describe(obj, keys[i]);
        const hint = hintOf(keys[i]);
        if (d === undefined) { report(entry, keys[i], "deleted", hint); continue; }
        const was = entry.descs[i];
        for (let f = 0; f < FIELDS.length; f++) {
          if (!same(field(d, FIELDS[f]), was[f])) { report(entry, keys[i], "replaced", hint); break; }
        }
      }
      const now = ownKeys(obj);
      let unchanged = now.length === keys.length;
      for (let i = 0; unchanged && i < now.length; i++) unchanged = now[i] === keys[i];
      if (unchanged) continue;
      if (entry.index === null) { // built on the first difference only
        entry.index = new MapCtor();
        for (let i = 0; i < keys.length; i++) apply(mapSet, entry.index, [keys[i], true]);
      }
      for (let i = 0; i < now.length; i++) {
        if (!apply(mapHas, entry.index, [now[i]])) report(entry, now[i], "added", hintOf(now[i]));
      }
    }
    return out;
  };
  return { __proto__: null, changes, size: entries.length };
})
