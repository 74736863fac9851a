// refpool static pass worker: reads one JSON request per line on stdin, answers one JSON line.
//
// Request: {"id": n, "source": "..."}. Answer: {"id": n, "facts": {...}} or
// {"id": n, "parseError": {"message", "line", "atEnd"}}. The facts are what the gate's rules
// (renderer/gate.py) need, taken from acorn's AST, so comments, strings, templates and regex
// literals never look like code. Linear in the size of the program.
"use strict";
const path = require("path");
const readline = require("readline");

const modules = process.env.REFPOOL_NODE_MODULES || path.join(__dirname, "..", "node_modules");
const acorn = require(path.join(modules, "acorn"));

// Every child node of an AST node, in source order (acorn nodes carry a string `type`).
const isNode = (v) => v !== null && typeof v === "object" && typeof v.type === "string";
function children(node) {
  const out = [];
  for (const key in node) {
    if (key === "loc") continue;
    const value = node[key];
    if (Array.isArray(value)) { for (const item of value) if (isNode(item)) out.push(item); }
    else if (isNode(value)) out.push(value);
  }
  return out;
}

// Visit every node with its parent, in source order, with an explicit stack: a program
// nested thousands deep (a.b.b.b...) would overflow a recursive walk.
function visit(ast, fn) {
  const stack = [[ast, null]];
  while (stack.length) {
    const [node, parent] = stack.pop();
    fn(node, parent);
    const kids = children(node);
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], node]);
  }
}

// The identifiers a pattern binds or assigns (`let {a, b: [c]} = ...`, `x = ...`, params).
function patternNames(root) {
  const found = [];
  const todo = [root];
  while (todo.length) {
    const p = todo.pop();
    if (!p) continue;
    if (p.type === "Identifier") found.push(p);
    else if (p.type === "ObjectPattern") {
      for (const q of p.properties) {
        if (q.type === "RestElement") { todo.push(q.argument); continue; }
        if (!q.computed && q.key.type === "Identifier") found.push(q.key);
        todo.push(q.value);
      }
    } else if (p.type === "ArrayPattern") p.elements.forEach((e) => todo.push(e));
    else if (p.type === "RestElement") todo.push(p.argument);
    else if (p.type === "AssignmentPattern") todo.push(p.left);
  }
  return found;
}

// Identifiers in binding or assignment position under `node`, and whether they declare.
function bindings(node) {
  const isFunction = node.type === "FunctionDeclaration" || node.type === "FunctionExpression" || node.type === "ArrowFunctionExpression";
  const isClass = node.type === "ClassDeclaration" || node.type === "ClassExpression";
  const declares = [];
  if ((isFunction || isClass) && node.id) declares.push(node.id);
  if (isFunction) node.params.forEach((p) => declares.push(...patternNames(p)));
  if (node.type === "VariableDeclarator") declares.push(...patternNames(node.id));
  if (node.type === "CatchClause" && node.param) declares.push(...patternNames(node.param));
  const assigns = [];
  if (node.type === "AssignmentExpression") assigns.push(...patternNames(node.left));
  if ((node.type === "ForInStatement" || node.type === "ForOfStatement") && node.left.type !== "VariableDeclaration") assigns.push(...patternNames(node.left));
  // A pattern's own keys ({a: b} binds b) are names, never uses.
  return { declares, assigns };
}

function facts(source) {
  const ast = acorn.parse(source, { ecmaVersion: "latest", sourceType: "script", locations: true });
  const declared = new Set();
  const bound = new Set(); // identifier nodes in a binding or assignment position
  const calls = []; // [name, line] of calls of a bare identifier
  const refs = []; // [name, line] of identifiers used as values
  const brush = []; // [method, line, computed] of brush.<method>
  const properties = new Set(); // every non-computed member property name
  let computedMembers = 0;
  let setupAssigned = false;
  let webglCanvas = false;
  let dataImage = null;
  let dynamicImport = null;
  const isWebgl = (arg) => arg && ((arg.type === "Identifier" && arg.name === "WEBGL") ||
    (arg.type === "MemberExpression" && !arg.computed && arg.property.name === "WEBGL") ||
    (arg.type === "Literal" && typeof arg.value === "string" && arg.value.toLowerCase() === "webgl"));
  const firstLine = (known, line) => (known === null || line < known ? line : known);
  visit(ast, (node, parent) => {
    const { declares, assigns } = bindings(node);
    for (const id of declares) { declared.add(id.name); bound.add(id); }
    for (const id of assigns) bound.add(id);
    switch (node.type) {
      case "Identifier": {
        if (!parent || bound.has(node)) return;
        // Property keys, member properties, labels and declared names are names, not uses.
        if (parent.type === "MemberExpression" && parent.property === node && !parent.computed) return;
        if ((parent.type === "Property" || parent.type === "PropertyDefinition" || parent.type === "MethodDefinition") && parent.key === node && !parent.computed) {
          if (parent.type !== "Property" || !parent.shorthand) return;
        }
        if (parent.type === "LabeledStatement" || parent.type === "BreakStatement" || parent.type === "ContinueStatement") return;
        if (parent.type === "MetaProperty") return;
        refs.push([node.name, node.loc.start.line]);
        return;
      }
      case "CallExpression":
        if (node.callee.type === "Identifier") {
          calls.push([node.callee.name, node.loc.start.line]);
          if (node.callee.name === "createCanvas" && node.arguments.some(isWebgl)) webglCanvas = true;
        }
        return;
      case "MemberExpression":
        if (node.computed) computedMembers++;
        else properties.add(node.property.name);
        if (node.object.type === "Identifier" && node.object.name === "brush") {
          const name = node.computed ? (node.property.type === "Literal" ? String(node.property.value) : null) : node.property.name;
          brush.push([name, node.loc.start.line, node.computed && name === null]);
        }
        return;
      case "AssignmentExpression":
        if (node.left.type === "Identifier" && node.left.name === "setup") setupAssigned = true;
        return;
      case "Literal":
        if (typeof node.value === "string" && node.value.indexOf("data:image/") >= 0) dataImage = firstLine(dataImage, node.loc.start.line);
        return;
      case "TemplateElement":
        if (node.value.cooked && node.value.cooked.indexOf("data:image/") >= 0) dataImage = firstLine(dataImage, node.loc.start.line);
        return;
      case "ImportExpression":
        dynamicImport = firstLine(dynamicImport, node.loc.start.line);
        return;
      default:
    }
  });
  return {
    declared: [...declared], calls, refs, brush, properties: [...properties], computedMembers,
    hasSetup: declared.has("setup") || setupAssigned, webglCanvas, dataImage, dynamicImport,
  };
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let id = null;
  let answer;
  try {
    const request = JSON.parse(line);
    id = request.id;
    try {
      answer = { id, facts: facts(request.source) };
    } catch (err) {
      if (err instanceof RangeError) {
        // Acorn's parser recurses: nesting thousands deep (((((...))))) exhausts its stack.
        // That is the program's shape, not our failure: it is reported as one.
        const message = "the program nests too deeply to read (thousands of levels); write it with less nesting";
        answer = { id, parseError: { message, line: null, column: null, atEnd: false } };
      } else {
        if (!(err instanceof SyntaxError) || !err.loc) throw err;
        const rest = request.source.slice(err.pos).trim();
        answer = { id, parseError: { message: err.message.replace(/ \(\d+:\d+\)$/, ""), line: err.loc.line, column: err.loc.column + 1, atEnd: rest.length === 0 } };
      }
    }
  } catch (err) {
    answer = { id, failure: String(err && err.message) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
