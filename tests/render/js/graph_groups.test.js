// graph_groups.js: grouping boxes by label prefix, folding them, and gradient formatting.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { load } = require("./load.js");

const GG = load("graph_groups.js").graphGroups;

// Two neurons of layer L1 (weights, a product, the output), one of L2, and ungrouped inputs.
const NAMES = [
  "x0", // 0
  "L1.N0.w0", // 1
  "L1.N0.w0*x", // 2
  "L1.N0.out", // 3
  "L1.N1.w0", // 4
  "L1.N1.out", // 5
  "L2.N0.w0", // 6
  "L2.N0.out", // 7
  "loss", // 8
];
const EDGES = [
  { s: 0, t: 2, label: "*" },
  { s: 1, t: 2, label: "*" },
  { s: 2, t: 3, label: "tanh" },
  { s: 0, t: 5, label: "*" },
  { s: 4, t: 5, label: "*" },
  { s: 3, t: 7, label: "*" },
  { s: 5, t: 7, label: "+" },
  { s: 6, t: 7, label: "*" },
  { s: 7, t: 8, label: "+" },
];

test("groupPath: L<k>.N<j>.<part> names give their layer and neuron; other names none", () => {
  assert.deepStrictEqual(GG.groupPath("L1.N3.w2*x"), ["L1", "L1.N3"]);
  assert.deepStrictEqual(GG.groupPath("enc.head3.q.k"), ["enc", "enc.head3"]);
  for (const name of ["x0", "n12", "L1.N3", "x1*w1 + x2*w2", "0.5.x", "a b.c.d", "L1.N3.", ""]) {
    assert.deepStrictEqual(GG.groupPath(name), [], name);
  }
});

test("buildGroups: layers hold their neurons; a one-member group does not count", () => {
  const model = GG.buildGroups(NAMES);
  assert.deepStrictEqual(model.keys, ["L1", "L1.N0", "L1.N1", "L2", "L2.N0"]);
  assert.deepStrictEqual(model.groups.get("L1").members, [1, 2, 3, 4, 5]);
  assert.deepStrictEqual(model.groups.get("L1").children, ["L1.N0", "L1.N1"]);
  assert.strictEqual(model.groups.get("L1.N0").kind, "neuron");
  assert.deepStrictEqual(model.paths[2], ["L1", "L1.N0"]);
  assert.deepStrictEqual(model.paths[0], []);
  const lone = GG.buildGroups(["a.b.c", "x", "y"]);
  assert.deepStrictEqual([lone.keys, lone.paths[0]], [[], []]);
});

test("buildGroups: a graph without such labels has no groups, so folding draws every node", () => {
  const model = GG.buildGroups(["a", "b", "a*b", "n3"]);
  assert.deepStrictEqual(model.keys, []);
  for (const level of ["none", "neuron", "layer"]) {
    const fold = GG.fold(model, GG.collapseLevel(model, level));
    assert.deepStrictEqual(fold.keys, [0, 1, 2, 3]);
  }
  assert.deepStrictEqual(GG.defaultCollapsed(model, 1000), new Set());
});

test("defaultCollapsed: neurons (else layers) fold above COLLAPSE_OVER nodes, nothing at or below it", () => {
  const model = GG.buildGroups(NAMES);
  assert.deepStrictEqual(GG.defaultCollapsed(model, GG.COLLAPSE_OVER), new Set());
  assert.deepStrictEqual(GG.defaultCollapsed(model, GG.COLLAPSE_OVER + 1), new Set(["L1.N0", "L1.N1", "L2.N0"]));
  // Layers only (no neuron has two members): the layers fold instead.
  const flat = GG.buildGroups(["enc.a.x", "enc.b.y", "dec.c.z", "dec.d.w", "out"]);
  assert.deepStrictEqual(GG.defaultCollapsed(flat, GG.COLLAPSE_OVER + 1), new Set(["enc", "dec"]));
});

test("fold: a node is drawn by its outermost collapsed group; expanding a layer shows its neurons", () => {
  const model = GG.buildGroups(NAMES);
  const neurons = GG.fold(model, GG.collapseLevel(model, "neuron"));
  assert.deepStrictEqual(neurons.keys, [0, "L1.N0", "L1.N1", "L2.N0", 8]);
  assert.deepStrictEqual(neurons.owner, [0, "L1.N0", "L1.N0", "L1.N0", "L1.N1", "L1.N1", "L2.N0", "L2.N0", 8]);
  const layers = GG.collapseLevel(model, "layer");
  assert.deepStrictEqual(GG.fold(model, layers).keys, [0, "L1", "L2", 8]);
  layers.delete("L1");
  assert.deepStrictEqual(GG.fold(model, layers).keys, [0, "L1.N0", "L1.N1", "L2", 8]);
  assert.deepStrictEqual(GG.fold(model, new Set()).keys, NAMES.map((_, i) => i));
});

test("foldEdges: edges inside a folded box vanish, parallel ones merge, labels kept when they agree", () => {
  const model = GG.buildGroups(NAMES);
  const fold = GG.fold(model, GG.collapseLevel(model, "neuron"));
  assert.deepStrictEqual(GG.foldEdges(EDGES, fold.owner), [
    { s: 0, t: "L1.N0", label: "*", count: 1 },
    { s: 0, t: "L1.N1", label: "*", count: 1 },
    { s: "L1.N0", t: "L2.N0", label: "*", count: 1 },
    { s: "L1.N1", t: "L2.N0", label: "+", count: 1 },
    { s: "L2.N0", t: 8, label: "+", count: 1 },
  ]);
  const layers = GG.fold(model, GG.collapseLevel(model, "layer"));
  const edges = GG.foldEdges(EDGES, layers.owner);
  assert.deepStrictEqual(edges.find((e) => e.s === "L1" && e.t === "L2"), { s: "L1", t: "L2", label: "", count: 2 });
  assert.deepStrictEqual(edges.find((e) => e.s === 0), { s: 0, t: "L1", label: "*", count: 2 });
});

test("foldEdges: with nothing folded every edge stays, a node self loop too", () => {
  const owner = [0, 1];
  const edges = [{ s: 0, t: 1, label: "+" }, { s: 1, t: 1, label: "" }];
  assert.deepStrictEqual(GG.foldEdges(edges, owner).map((e) => [e.s, e.t]), [[0, 1], [1, 1]]);
});

test("groupLines: key, the stepped member or the contents, and the peak gradient", () => {
  const model = GG.buildGroups(NAMES);
  const labels = NAMES.map((name) => name + "\nop: leaf\ndata: 1\ngrad: 0");
  labels[2] = "L1.N0.w0*x\nop: *\ndata: 1\ngrad: -0.25";
  labels[3] = "L1.N0.out\nop: tanh\ndata: 1\ngrad: 0.125";
  assert.deepStrictEqual(GG.groupLines(model, "L1.N0", labels, NAMES, -1), {
    lines: ["L1.N0", "neuron \u00b7 3 nodes", "peak grad: -0.25"],
    grad: -0.25,
  });
  assert.deepStrictEqual(GG.groupLines(model, "L1", labels, NAMES, -1).lines[1], "layer \u00b7 2 neurons \u00b7 5 nodes");
  const layer = GG.groupLines(model, "L1", labels, NAMES, 3);
  assert.deepStrictEqual(layer.lines, ["L1", "\u25b6 L1.N0.out", "peak grad: -0.25"]);
  const plain = GG.groupLines(model, "L2.N0", ["", "", "", "", "", "", "w", "o", ""], NAMES, -1);
  assert.deepStrictEqual([plain.lines[2], plain.grad], ["no gradients", null]);
});

test("parseGrad / gradOf: the number of a 'grad: G' row; nan, inf and other rows give null", () => {
  assert.strictEqual(GG.parseGrad("grad: -1.5"), -1.5);
  assert.strictEqual(GG.parseGrad("grad: 1e-05"), 1e-5);
  for (const line of ["grad: nan", "grad: inf", "grad: -inf", "data: 2", "grad:", "grad: 1 2", "xgrad: 1"]) {
    assert.strictEqual(GG.parseGrad(line), null, line);
  }
  assert.strictEqual(GG.gradOf("a\nop: +\ndata: 2\ngrad: 0.5"), 0.5);
  assert.strictEqual(GG.gradOf("a\ndata: 2"), null);
});

test("fmtGrad: signed, 4 significant digits, exponent form below 1e-3 and from 1e5", () => {
  const cases = [
    [0, "0"],
    [-0, "0"],
    [0.5, "+0.5"],
    [-1.5, "-1.5"],
    [1, "+1"],
    [0.123456789, "+0.1235"],
    [-12.3456, "-12.35"],
    [12345.6, "+12350"],
    [0.00123456, "+0.001235"],
    [-0.000123456, "-1.235e-4"],
    [1e-5, "+1e-5"],
    [123456, "+1.235e5"],
    [99999.9, "+1e5"],
    [Infinity, "Infinity"],
  ];
  for (const [x, want] of cases) assert.strictEqual(GG.fmtGrad(x), want, String(x));
});

test("gradLevel / gradClass: colour strength by size against the largest gradient, hue by sign", () => {
  assert.deepStrictEqual([0, 1e-4, 0.05, 0.5, -1].map((x) => GG.gradLevel(x, 1)), [0, 1, 2, 3, 3]);
  assert.strictEqual(GG.gradLevel(null, 1), 0);
  assert.strictEqual(GG.gradLevel(0.5, 0), 0);
  assert.strictEqual(GG.gradClass(-0.9, 1), "fx-gneg fx-g3");
  assert.strictEqual(GG.gradClass(0.01, 1), "fx-gpos fx-g1");
  assert.strictEqual(GG.gradClass(0, 1), "fx-gzero");
});

test("showGrads: only 'grad:' rows change; the value is the last one's", () => {
  assert.deepStrictEqual(GG.showGrads("w\nop: leaf\ndata: 0.123456\ngrad: -0.000123456"), {
    lines: ["w", "op: leaf", "data: 0.123456", "grad: -1.235e-4"],
    grad: -0.000123456,
  });
  assert.deepStrictEqual(GG.showGrads("a -> b"), { lines: ["a -> b"], grad: null });
});
