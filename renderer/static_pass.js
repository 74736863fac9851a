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
const walk = require(path.join(modules, "acorn-walk"));

function declaredNames(ast) {
  const names = new Set();
  const addPattern = (p) => {
    if (!p) return;
    if (p.type === "Identifier") names.add(p.name);
    else if (p.type === "ObjectPattern") p.properties.forEach((q) => addPattern(q.type === "RestElement" ? q.argument : q.value));
    else if (p.type === "ArrayPattern") p.elements.forEach(addPattern);
    else if (p.type === "RestElement") addPattern(p.argument);
    else if (p.type === "AssignmentPattern") addPattern(p.left);
  };
  walk.full(ast, (node) => {
    if (node.type === "FunctionDeclaration" || node.type === "FunctionExpression" || node.type === "ClassDeclaration" || node.type === "ClassExpression") {
      if (node.id) names.add(node.id.name);
    }
    if (node.type === "FunctionDeclaration" || node.type === "FunctionExpression" || node.type === "ArrowFunctionExpression") {
      node.params.forEach(addPattern);
    }
    if (node.type === "VariableDeclarator") addPattern(node.id);
    if (node.type === "CatchClause") addPattern(node.param);
  });
  return names;
}

function facts(source) {
  const ast = acorn.parse(source, { ecmaVersion: "latest", sourceType: "script", locations: true });
  const declared = declaredNames(ast);
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
  walk.ancestor(ast, {
    Identifier(node, ancestors) {
      const parent = ancestors[ancestors.length - 2];
      if (!parent) return;
      // Property keys, member properties, labels and declarations are names, not uses.
      if (parent.type === "MemberExpression" && parent.property === node && !parent.computed) return;
      if ((parent.type === "Property" || parent.type === "PropertyDefinition" || parent.type === "MethodDefinition") && parent.key === node && !parent.computed) {
        if (parent.type !== "Property" || !parent.shorthand) return;
      }
      if (parent.type === "LabeledStatement" || parent.type === "BreakStatement" || parent.type === "ContinueStatement") return;
      refs.push([node.name, node.loc.start.line]);
    },
    CallExpression(node) {
      if (node.callee.type === "Identifier") {
        calls.push([node.callee.name, node.loc.start.line]);
        if (node.callee.name === "createCanvas" && node.arguments.some(isWebgl)) webglCanvas = true;
      }
    },
    MemberExpression(node) {
      if (node.computed) computedMembers++;
      else properties.add(node.property.name);
      if (node.object.type === "Identifier" && node.object.name === "brush") {
        const name = node.computed ? (node.property.type === "Literal" ? String(node.property.value) : null) : node.property.name;
        brush.push([name, node.loc.start.line, node.computed && name === null]);
      }
    },
    AssignmentExpression(node) {
      if (node.left.type === "Identifier" && node.left.name === "setup") setupAssigned = true;
    },
    Literal(node) {
      if (!dataImage && typeof node.value === "string" && node.value.indexOf("data:image/") >= 0) dataImage = node.loc.start.line;
    },
    TemplateElement(node) {
      if (!dataImage && node.value.cooked && node.value.cooked.indexOf("data:image/") >= 0) dataImage = node.loc.start.line;
    },
    ImportExpression(node) {
      if (!dynamicImport) dynamicImport = node.loc.start.line;
    },
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
      if (!(err instanceof SyntaxError) || !err.loc) throw err;
      const rest = request.source.slice(err.pos).trim();
      answer = { id, parseError: { message: err.message.replace(/ \(\d+:\d+\)$/, ""), line: err.loc.line, column: err.loc.column + 1, atEnd: rest.length === 0 } };
    }
  } catch (err) {
    answer = { id, failure: String(err && err.message) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
