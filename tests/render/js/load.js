// Load the viewer's scripts (flow_xray/render/static) into Node the way the page does:
// in strict mode, sharing one FX object. No DOM: only code that needs none at load time
// (every file) or when called (the pure modules: layout.js, ...) can be tested here.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

const STATIC = path.join(__dirname, "..", "..", "..", "flow_xray", "render", "static");

function source(name) {
  return fs.readFileSync(path.join(STATIC, name), "utf8");
}

// FX after running `names` in order in this realm (so results compare with assert.deepStrictEqual).
function load(...names) {
  const FX = {};
  for (const name of names) {
    const run = vm.runInThisContext("(function (FX) {\n\"use strict\";\n" + source(name) + "\n})", { filename: name });
    run(FX);
  }
  return FX;
}

// The files of the trace page in page order (page.py SCRIPT_FILES), then the diff page's own;
// pytest passes the list in FX_SCRIPT_FILES.
function scriptOrder() {
  if (process.env.FX_SCRIPT_FILES) return JSON.parse(process.env.FX_SCRIPT_FILES);
  const html = fs.readFileSync(path.join(STATIC, "..", "page.py"), "utf8");
  const files = html.match(/SCRIPT_FILES = \(([^)]*)\)/)[1].match(/"[\w.]+"/g).map(JSON.parse);
  const rest = fs.readdirSync(STATIC).filter((f) => f.endsWith(".js") && files.indexOf(f) < 0).sort();
  return files.concat(rest);
}

module.exports = { STATIC, source, load, scriptOrder };
