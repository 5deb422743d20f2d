// util.js: the figures the viewer prints -- costs as plain decimals, durations and tokens short.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { load } = require("./load.js");

const U = load("util.js").util;

test("costs are plain decimals with two significant digits, never exponents", () => {
  assert.strictEqual(U.fmtCost(6.4e-7), "$0.00000064");
  assert.strictEqual(U.fmtCost(0.000027), "$0.000027");
  assert.strictEqual(U.fmtCost(0.0000549), "$0.000055");
  assert.strictEqual(U.fmtCost(0.5), "$0.50");
  assert.strictEqual(U.fmtCost(0.0123), "$0.012");
  assert.strictEqual(U.fmtCost(0), "$0.00");
  assert.strictEqual(U.fmtCost(1234.5678), "$1,234.57");
  assert.strictEqual(U.fmtCost(1e-15), "$0.000000000000001");
  assert.strictEqual(U.fmtCost(null), "cost unknown");
});

test("the diff asks for three significant digits", () => {
  assert.strictEqual(U.fmtCost(0.0000549, 3), "$0.0000549");
  assert.strictEqual(U.fmtCost(0.0123, 3), "$0.0123");
  assert.strictEqual(U.fmtCost(0.5, 3), "$0.50");
});

test("durations keep at most four significant digits", () => {
  assert.strictEqual(U.fmtMs(2.8349), "2.83 ms");
  assert.strictEqual(U.fmtMs(646.53), "646.5 ms");
  assert.strictEqual(U.fmtMs(19409.1), "19.4 s");
  assert.strictEqual(U.fmtMs(1941.1), "1.94 s");
  assert.strictEqual(U.fmtMs(4321000), "4,321 s");
  assert.strictEqual(U.fmtMs(null), "never ended");
});

test("token counts read k, M and B past ten thousand", () => {
  assert.strictEqual(U.fmtTokensShort(9999), "9,999 tok");
  assert.strictEqual(U.fmtTokensShort(12345), "12.3k tok");
  assert.strictEqual(U.fmtTokensShort(22222221), "22.2M tok");
});

test("numbers in the detail panel are plain decimals with the digits they had", () => {
  assert.strictEqual(U.plainNumber(6.4e-7), "0.00000064");
  assert.strictEqual(U.plainNumber(-1.25e-9), "-0.00000000125");
  assert.strictEqual(U.plainNumber(1e21), "1000000000000000000000");
  assert.strictEqual(U.plainNumber(1.5e22), "15000000000000000000000");
  assert.strictEqual(U.plainNumber(0.000123), "0.000123");
  assert.strictEqual(U.plainNumber(42), "42");
  assert.strictEqual(Number(U.plainNumber(6.4e-7)), 6.4e-7);
});
