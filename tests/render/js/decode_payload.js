// Decode a packed trace payload with the page's own payload.js under Node and print its rows
// as JSON (every field each row has, in column order): what the viewer reads from the page.
// Usage: node decode_payload.js < embedded.json (the #fx-data object of a page).
"use strict";

const { load } = require("./load.js");

const FX = load("payload.js");
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  FX.payload.unpack(JSON.parse(input)).then((data) => {
    const rows = data.nodes.map((row) => {
      const out = {};
      for (const key in row) if (row[key] !== undefined) out[key] = row[key];
      return out;
    });
    process.stdout.write(JSON.stringify({ head: Object.assign({}, data, { nodes: undefined }), rows: rows }));
  }, (err) => {
    process.stderr.write(String(err && err.stack));
    process.exit(1);
  });
});
