// state.js: the URL fragment of a trace page.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { load } = require("./load.js");

const S = load("state.js").state;

test("format then parse gives the state back", () => {
  const state = { call: "00f067aa0ba902b7", q: "model:gpt-4o duration>1s", errors: true, view: "graph" };
  const hash = S.format(state);
  assert.ok(hash.startsWith("#call=00f067aa0ba902b7&"), hash);
  assert.deepStrictEqual(S.parse(hash), state);
});

test("empty values are left out; an empty state is no fragment", () => {
  assert.strictEqual(S.format({ call: "", q: null, errors: false }), "");
  assert.strictEqual(S.format({ q: "a&b=c #d" }), "#q=a%26b%3Dc+%23d");
  assert.deepStrictEqual(S.parse("#q=a%26b%3Dc+%23d"), { q: "a&b=c #d" });
  assert.deepStrictEqual(S.parse(""), {});
});
