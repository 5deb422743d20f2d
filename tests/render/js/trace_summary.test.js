// trace_summary.js: what the trace graph draws past SUMMARY_OVER calls.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { load } = require("./load.js");

const S = load("trace_summary.js").traceSummary;

// A tree from [name, parent index, failed?] rows in pre-order.
function tree(rows) {
  const n = rows.length;
  const parent = new Int32Array(n);
  const size = new Int32Array(n).fill(1);
  rows.forEach(function (r, i) { parent[i] = r[1]; });
  for (let i = n - 1; i > 0; i--) if (parent[i] >= 0) size[parent[i]] += size[i];
  return {
    count: n, parent: parent, size: size,
    name: function (i) { return rows[i][0]; },
    failed: function (i) { return Boolean(rows[i][2]); },
    allowed: function () { return true; },
  };
}

function shown(boxes, t) {
  return boxes.map(function (b) {
    const label = b.type === "group" ? t.name(b.row) + " x" + b.rows.length
      : b.type === "more" ? "+" + b.rows.length + " more"
      : b.type === "levels" ? b.rows.length + " levels" : t.name(b.row);
    return [label, b.parent];
  });
}

// agent > 40 x fetch (the 8th fails), plan, answer > format
function agent() {
  const rows = [["agent", -1], ["plan", 0]];
  for (let k = 0; k < 40; k++) rows.push(["fetch", 0, k === 7]);
  rows.push(["answer", 0], ["format", 42]);
  return rows;
}

test("repeated siblings are one group box; the selection's children are drawn", () => {
  const t = tree(agent());
  assert.deepStrictEqual(shown(S.summarize(t, 0), t), [
    ["agent", -1], ["plan", 0], ["fetch x40", 0], ["answer", 0],
  ]);
});

test("a group selects its first failed call; that call is then drawn beside its group", () => {
  const t = tree(agent());
  const group = S.summarize(t, 0)[2];
  assert.strictEqual(group.row, 9);
  assert.deepStrictEqual(shown(S.summarize(t, 9), t), [
    ["agent", -1], ["plan", 0], ["fetch x39", 0], ["fetch", 0], ["answer", 0],
  ]);
});

test("a call off the path carries how many calls are folded under it", () => {
  const t = tree(agent());
  const answer = S.summarize(t, 0).find(function (b) { return t.name(b.row) === "answer"; });
  assert.strictEqual(answer.hidden, 1);
});

test("above the selection, a level keeps the path's call and one box for the rest", () => {
  const t = tree(agent());
  assert.deepStrictEqual(shown(S.summarize(t, 43), t), [
    ["agent", -1], ["answer", 0], ["format", 1], ["+41 more", 0],
  ]);
});

test("many different children: the first ones and one box for the rest", () => {
  const rows = [["root", -1]];
  for (let k = 0; k < 25; k++) rows.push(["step_" + k, 0]);
  const t = tree(rows);
  const boxes = shown(S.summarize(t, 0), t);
  assert.strictEqual(boxes.length, 5);
  assert.deepStrictEqual(boxes[4], ["+22 more", 0]);
  // the selected child stays in view even when it is past the first ones
  assert.ok(shown(S.summarize(t, 20), t).some(function (b) { return b[0] === "step_19"; }));
});

test("a deep path folds its middle levels into one box", () => {
  const rows = [];
  for (let d = 0; d < 23; d++) rows.push(["fib_" + d, d - 1]);
  const t = tree(rows);
  assert.deepStrictEqual(shown(S.summarize(t, 22), t), [
    ["fib_0", -1], ["18 levels", 0], ["fib_19", 1], ["fib_20", 2], ["fib_21", 3], ["fib_22", 4],
  ]);
});

test("boxes come in pre-order, each after its parent", () => {
  const t = tree(agent());
  S.summarize(t, 43).forEach(function (b, k) { assert.ok(b.parent < k); });
});
