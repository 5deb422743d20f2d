// layout.js: the tidy tree and the layered DAG layouts, without a browser.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { load } = require("./load.js");

const L = load("layout.js").layout;
const BOX = { w: 100, h: 40, gapX: 20, gapY: 30, horizontal: false };

function overlaps(pos, w, h) {
  for (let i = 0; i < pos.length; i++) {
    for (let j = i + 1; j < pos.length; j++) {
      if (Math.abs(pos[i].x - pos[j].x) < w && Math.abs(pos[i].y - pos[j].y) < h) return [i, j];
    }
  }
  return null;
}

test("tree: a parent is centred over its first and last child, one rank above them", () => {
  // 0 -> (1 -> (2, 3), 4)
  const items = [{ parent: -1 }, { parent: 0 }, { parent: 1 }, { parent: 1 }, { parent: 0 }];
  const pos = L.tree(items, BOX);
  assert.strictEqual(pos[1].x, (pos[2].x + pos[3].x) / 2);
  assert.strictEqual(pos[0].x, (pos[1].x + pos[4].x) / 2);
  assert.strictEqual(pos[2].y - pos[1].y, BOX.h + BOX.gapY);
  assert.strictEqual(pos[1].y, pos[4].y);
  assert.strictEqual(overlaps(pos, BOX.w, BOX.h), null);
});

test("tree: leaves keep their pre-order, left to right, and never overlap", () => {
  const items = [{ parent: -1 }];
  for (let k = 0; k < 30; k++) items.push({ parent: k % 3 === 0 ? 0 : items.length - 1 });
  const pos = L.tree(items, BOX);
  assert.strictEqual(overlaps(pos, BOX.w, BOX.h), null);
  const leaves = items.map((_, i) => i).filter((i) => !items.some((it) => it.parent === i));
  for (let k = 1; k < leaves.length; k++) assert.ok(pos[leaves[k]].x > pos[leaves[k - 1]].x);
});

test("tree: horizontal puts depth along x", () => {
  const items = [{ parent: -1 }, { parent: 0 }, { parent: 0 }];
  const pos = L.tree(items, Object.assign({}, BOX, { horizontal: true }));
  assert.ok(pos[1].x > pos[0].x);
  assert.strictEqual(pos[1].x, pos[2].x);
  assert.strictEqual(pos[0].y, (pos[1].y + pos[2].y) / 2);
});

test("tree: a second root starts after the first tree, with extra room", () => {
  const items = [{ parent: -1 }, { parent: 0 }, { parent: -1 }];
  const pos = L.tree(items, BOX);
  assert.ok(pos[2].x - pos[1].x > BOX.w + BOX.gapX);
});

test("extent covers every box", () => {
  assert.deepStrictEqual(L.extent([{ x: 50, y: 20 }, { x: 170, y: 90 }], 100, 40), { w: 220, h: 110 });
});

function sizes(n) {
  return Array.from({ length: n }, () => ({ w: 60, h: 30 }));
}

test("dag: every edge points down a layer (TB), and boxes in a layer do not overlap", () => {
  const edges = [{ s: 0, t: 1 }, { s: 0, t: 2 }, { s: 1, t: 3 }, { s: 2, t: 3 }, { s: 0, t: 3 }];
  const out = L.dag(sizes(4), edges, "TB");
  for (const e of edges) assert.ok(out.pos[e.t].y > out.pos[e.s].y, JSON.stringify(e));
  assert.strictEqual(out.pos[1].y, out.pos[2].y);
  assert.ok(Math.abs(out.pos[1].x - out.pos[2].x) >= 60);
  assert.strictEqual(out.routes.length, edges.length);
  // The long edge 0 -> 3 bends through a dummy node in the middle layer.
  assert.strictEqual(out.routes[4].length, 3);
  assert.deepStrictEqual(out.routes[4][0], out.pos[0]);
  assert.deepStrictEqual(out.routes[4][2], out.pos[3]);
});

test("dag: LR runs ranks along x; BT flips them", () => {
  const edges = [{ s: 0, t: 1 }];
  const lr = L.dag(sizes(2), edges, "LR");
  assert.ok(lr.pos[1].x > lr.pos[0].x);
  assert.strictEqual(lr.pos[0].y, lr.pos[1].y);
  const bt = L.dag(sizes(2), edges, "BT");
  assert.ok(bt.pos[1].y < bt.pos[0].y);
});

test("dag: a cycle and a self loop still lay out, every node placed once", () => {
  const edges = [{ s: 0, t: 1 }, { s: 1, t: 2 }, { s: 2, t: 0 }, { s: 1, t: 1 }];
  const out = L.dag(sizes(3), edges, "TB");
  assert.strictEqual(out.pos.length, 3);
  for (const p of out.pos) assert.ok(Number.isFinite(p.x) && Number.isFinite(p.y));
  const ys = new Set(out.pos.map((p) => p.y));
  assert.strictEqual(ys.size, 3); // the flipped edge keeps three layers
  // A route always runs from its own source to its own target, flipped or not.
  assert.deepStrictEqual(out.routes[2][0], out.pos[2]);
  assert.deepStrictEqual(out.routes[2][out.routes[2].length - 1], out.pos[0]);
});

test("dag: crossing reduction untangles a bipartite swap", () => {
  // 0 -> 3, 1 -> 2 in input order crosses; after ordering, it should not.
  const edges = [{ s: 0, t: 3 }, { s: 1, t: 2 }];
  const out = L.dag(sizes(4), edges, "TB");
  const crossed = (out.pos[0].x - out.pos[1].x) * (out.pos[3].x - out.pos[2].x) < 0;
  assert.strictEqual(crossed, false);
});

test("dag: a source sits one layer before its first user, not in layer 0", () => {
  // 0 -> 1 -> 2 -> 3, and the source 4 feeds only 3: it is placed in 2's layer, beside it.
  const edges = [{ s: 0, t: 1 }, { s: 1, t: 2 }, { s: 2, t: 3 }, { s: 4, t: 3 }];
  const out = L.dag(sizes(5), edges, "TB");
  assert.strictEqual(out.pos[4].y, out.pos[2].y);
  assert.strictEqual(out.routes[3].length, 2); // a short edge: no dummy nodes
  // A source with users in several layers sits before the earliest one.
  const more = L.dag(sizes(5), edges.concat([{ s: 4, t: 1 }]), "TB");
  assert.strictEqual(more.pos[4].y, more.pos[0].y);
});
