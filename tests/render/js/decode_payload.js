// Decode a packed trace payload with the page's own payload.js under Node and print its rows
// as JSON (every field each row has, in column order): what the viewer reads from the page.
// With queries, also each query's matches (search.js) among the decoded rows, and among
// plain copies of them (objects holding the parsed values, as the rows were before format 3).
// Usage: node decode_payload.js [QUERY...] < embedded.json (the #fx-data object of a page).
"use strict";

const { load } = require("./load.js");

const FX = load("payload.js", "search.js");
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
    const matches = {};
    for (const query of process.argv.slice(2)) {
      const found = (nodes) => {
        const test = FX.search.matcher(FX.search.parse(query));
        return nodes.map((node, i) => (test(node) ? i : -1)).filter((i) => i >= 0);
      };
      matches[query] = { decoded: found(data.nodes), plain: found(rows) };
    }
    const head = Object.assign({}, data, { nodes: undefined });
    process.stdout.write(JSON.stringify({ head: head, rows: rows, matches: matches }));
  }, (err) => {
    process.stderr.write(String(err && err.stack));
    process.exit(1);
  });
});
