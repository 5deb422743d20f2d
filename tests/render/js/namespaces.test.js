// Each viewer script publishes exactly one namespace on FX, named on its first line
// ("// util.js -> FX.util: ..."), and nothing else: no other FX member, no global, no
// top-level binding shared with the files concatenated after it.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const vm = require("node:vm");
const { source, scriptOrder } = require("./load.js");

const files = scriptOrder();

function declared(name) {
  const match = source(name).match(/^\/\/ (\S+) -> FX\.(\w+)[:\s]/);
  assert.ok(match, name + " must start with '// " + name + " -> FX.<namespace>: ...'");
  assert.strictEqual(match[1], name);
  return match[2];
}

test("every script is listed in the page order", () => {
  assert.ok(files.length >= 10, files.join(", "));
  assert.strictEqual(new Set(files).size, files.length);
});

test("each script defines only its own namespace", () => {
  const context = vm.createContext({ FX: {} });
  const globals = Object.getOwnPropertyNames(context).sort();
  for (const name of files) {
    const ns = declared(name);
    const before = Object.keys(context.FX);
    vm.runInContext("\"use strict\";\n" + source(name), context, { filename: name });
    const added = Object.keys(context.FX).filter((k) => before.indexOf(k) < 0);
    assert.deepStrictEqual(added, [ns], name + " added " + JSON.stringify(added));
    const value = context.FX[ns];
    assert.ok(value && (typeof value === "object" || typeof value === "function"), name + ": FX." + ns);
    const privates = Object.keys(value).filter((k) => k.startsWith("_"));
    assert.deepStrictEqual(privates, [], name + " publishes private members");
    assert.deepStrictEqual(Object.getOwnPropertyNames(context).sort(), globals, name + " added a global");
  }
});

test("no script keeps a top-level binding (everything lives inside its function)", () => {
  for (const name of files) {
    // A top-level const/let/class/function, run twice in one scope, is declared twice.
    const context = vm.createContext({ FX: {} });
    const code = "\"use strict\";\n" + source(name);
    vm.runInContext(code, context, { filename: name });
    assert.doesNotThrow(() => vm.runInContext(code, context, { filename: name }), name);
  }
});
