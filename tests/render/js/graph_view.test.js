// graph_view.js: its pure parts -- where edge labels fit, and how the view follows a box.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { load } = require("./load.js");

const G = load("util.js", "graph_view.js").graphView;
const OPT = { readable: 0.75, scale: 1 };

test("placeLabels: a label over a box or an earlier label is left out", () => {
  const boxes = [{ x: 0, y: 0, w: 100, h: 40 }];
  const labels = [
    { x: 10, y: 30, w: 20, h: 13 }, // covers the box
    { x: 10, y: 60, w: 20, h: 13 }, // free
    { x: 25, y: 65, w: 20, h: 13 }, // covers the one before
    { x: 400, y: 400, w: 20, h: 13 }, // free, far away (another grid cell)
    { x: 100, y: 0, w: 10, h: 13 }, // touches the box's edge only
  ];
  assert.deepStrictEqual(G.placeLabels(labels, boxes), [false, true, false, true, true]);
});

test("placeLabels: labels spanning several grid cells are still found", () => {
  const wide = [{ x: -500, y: 0, w: 1000, h: 13 }];
  assert.deepStrictEqual(G.placeLabels([{ x: 300, y: 5, w: 10, h: 5 }], wide), [false]);
});

test("followTransform: no move when the box is well inside the view at a readable scale", () => {
  const view = { width: 800, height: 600, scale: 1, tx: 0, ty: 0 };
  assert.strictEqual(G.followTransform(view, { x: 400, y: 300, w: 100, h: 40 }, OPT), null);
});

test("followTransform: an off-screen box is centred, keeping a readable scale", () => {
  const view = { width: 800, height: 600, scale: 1.5, tx: 0, ty: 0 };
  const move = G.followTransform(view, { x: 2000, y: 50, w: 100, h: 40 }, OPT);
  assert.deepStrictEqual(move, { scale: 1.5, tx: 400 - 3000, ty: 300 - 75 });
});

test("followTransform: a box in view but too small to read is zoomed to the target scale and centred", () => {
  const view = { width: 800, height: 600, scale: 0.2, tx: 0, ty: 0 };
  const move = G.followTransform(view, { x: 1000, y: 1000, w: 100, h: 40 }, OPT);
  assert.deepStrictEqual(move, { scale: 1, tx: -600, ty: -700 });
  // The moved view leaves it alone next time.
  assert.strictEqual(G.followTransform(Object.assign({ width: 800, height: 600 }, move),
    { x: 1000, y: 1000, w: 100, h: 40 }, OPT), null);
});

test("followTransform: a box wider than the view is scaled down to fit", () => {
  const view = { width: 300, height: 600, scale: 0.1, tx: 0, ty: 0 };
  const move = G.followTransform(view, { x: 0, y: 0, w: 536, h: 40 }, OPT);
  assert.strictEqual(move.scale, (300 - 32) / 536);
});

test("edgePath: a vertical edge leaves and enters along the rank axis", () => {
  const d = G.edgePath([{ x: 0, y: 0 }, { x: 10, y: 20 }], false);
  assert.strictEqual(d, "M0.0,0.0 C0.0,10.0 10.0,10.0 10.0,20.0");
});

test("followTransform: with the drawing's bounds it stops at the drawing's edge, the box still in view", () => {
  // A tall drawing, the box at its top: centring it would show empty room above the drawing.
  const view = { width: 800, height: 600, scale: 0.2, tx: 0, ty: 0 };
  const bounds = { x0: 0, y0: 0, x1: 2000, y1: 3000 };
  const move = G.followTransform(view, { x: 1000, y: 20, w: 100, h: 40 }, Object.assign({ bounds: bounds }, OPT));
  assert.deepStrictEqual(move, { scale: 1, tx: 400 - 1000, ty: 16 });
  // An axis the whole drawing fits is centred on the drawing.
  const narrow = { x0: 0, y0: 0, x1: 300, y1: 3000 };
  const centred = G.followTransform(view, { x: 20, y: 1500, w: 40, h: 40 }, Object.assign({ bounds: narrow }, OPT));
  assert.deepStrictEqual([centred.tx, centred.ty], [250, -1200]);
});
