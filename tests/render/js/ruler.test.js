// ruler.js: round tick steps and labels for the timeline's time axis, without a browser.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { load } = require("./load.js");

const R = load("ruler.js").ruler;

function isRound(s) {
  const mantissa = s / Math.pow(10, Math.floor(Math.log10(s) + 1e-9));
  return [1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-9);
}

test("step: the smallest 1/2/5 x 10^k that keeps ticks minGap pixels apart", () => {
  assert.strictEqual(R.step(1000, 1000, 80), 100); // 80 ms needed -> 100
  assert.strictEqual(R.step(1000, 1000, 50), 50);
  assert.strictEqual(R.step(1000, 1000, 20), 20);
  assert.strictEqual(R.step(1000, 1000, 10), 10);
  assert.strictEqual(R.step(3, 600, 80), 0.5);
  assert.strictEqual(R.step(0.01, 500, 80), 0.002);
  assert.strictEqual(R.step(86400000, 800, 80), 10000000);
});

test("step: every span and width gives a round step with enough room", () => {
  for (let e = -5; e <= 7; e++) {
    for (const m of [1, 1.3, 2.7, 4.9, 7.7]) {
      const span = m * Math.pow(10, e);
      for (const width of [120, 333, 800, 1913]) {
        const s = R.step(span, width, 80);
        assert.ok(isRound(s), span + " -> " + s);
        assert.ok((s * width) / span >= 80 - 1e-6, "too close: " + span + " " + s);
        // the next smaller round step would be too close
        const smaller = [0.5, 0.5, 0.4][[1, 2, 5].indexOf(Math.round(s / Math.pow(10, Math.floor(Math.log10(s) + 1e-9))))] * s;
        assert.ok((smaller * width) / span < 80 + 1e-6, "not the smallest: " + span + " " + s);
      }
    }
  }
});

test("ticks: round values inside the window, placed in proportion", () => {
  const t = R.ticks(130, 470, 680, 80);
  assert.deepStrictEqual(t.map((k) => k.ms), [150, 200, 250, 300, 350, 400, 450]);
  assert.deepStrictEqual(t.map((k) => k.label), ["150 ms", "200 ms", "250 ms", "300 ms", "350 ms", "400 ms", "450 ms"]);
  assert.strictEqual(t[0].x, 40);
  for (let k = 1; k < t.length; k++) assert.ok(t[k].x - t[k - 1].x >= 80);
});

test("ticks: no floating-point dust in values or labels", () => {
  const t = R.ticks(0.1, 0.9, 800, 80);
  assert.deepStrictEqual(t.map((k) => k.ms), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
  assert.strictEqual(t[2].label, "300 \u00b5s");
  assert.deepStrictEqual(R.ticks(0, 0, 800, 80), []);
  assert.deepStrictEqual(R.ticks(0, 10, 0, 80), []);
});

test("label: the unit and decimals follow the step", () => {
  assert.strictEqual(R.label(2000, 1000), "2 s");
  assert.strictEqual(R.label(12000, 2000), "12 s");
  assert.strictEqual(R.label(1500, 500), "1500 ms");
  assert.strictEqual(R.label(12.5, 0.5), "12500 \u00b5s");
  assert.strictEqual(R.label(40, 20), "40 ms");
  assert.strictEqual(R.label(0.0015, 0.0005), "1.5 \u00b5s");
  assert.strictEqual(R.label(0, 5), "0 ms");
});
