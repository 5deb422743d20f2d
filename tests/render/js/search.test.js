// search.js: the query language of the trace viewer's search box.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { load } = require("./load.js");

const S = load("search.js").search;

const NODES = [
  { name: "plan", kind: "llm", status: "ok", latency_ms: 44.6, self_ms: 44.6, inputs: { prompt: "Plan the trip" },
    meta: { model: "gpt-4o-mini", total_tokens: 470, estimated_cost_usd: 0.0001 }, attributes: {} },
  { name: "get_weather", kind: "tool", status: "error", view_status: "error", latency_ms: 2003.5, self_ms: 2003.5,
    error: "TimeoutError: weather API did not answer", inputs: { city: "Paris" }, attributes: { "http.route": "/forecast" } },
  { name: "answer", kind: "llm", status: "ok", view_status: "slow", latency_ms: 612.7, self_ms: 600,
    inputs: {}, output: "The Louvre opens at 9:00", meta: { model: "gpt-4o", prompt_tokens: 1830, completion_tokens: 142 } },
  { name: "root", kind: "agent", status: "cancelled", latency_ms: 2921.4, self_ms: 3, inputs: {}, attributes: {} },
];

function names(query) {
  const match = S.matcher(S.parse(query));
  return NODES.filter(match).map((n) => n.name);
}

test("durations read ms, s, m and bare numbers", () => {
  assert.strictEqual(S.parseDuration("500ms"), 500);
  assert.strictEqual(S.parseDuration("1.5s"), 1500);
  assert.strictEqual(S.parseDuration("2m"), 120000);
  assert.strictEqual(S.parseDuration("250"), 250);
  assert.strictEqual(S.parseDuration("soon"), null);
});

test("parse splits terms, keeps quotes, reads comparisons and negation", () => {
  const parsed = S.parse('model:gpt-4o duration>=1s -kind:tool "weather API"');
  assert.deepStrictEqual(parsed.terms, [
    { type: "model", key: "model", value: "gpt-4o", neg: false },
    { type: "num", field: "latency_ms", op: ">=", value: 1000, neg: false },
    { type: "kind", key: "kind", value: "tool", neg: true },
    { type: "text", value: "weather api", neg: false },
  ]);
  assert.deepStrictEqual(parsed.errors, []);
  assert.deepStrictEqual(S.parse("duration>fast").errors, ['cannot read "fast" in duration>fast']);
});

test("field terms", () => {
  assert.deepStrictEqual(names("model:gpt-4o-mini"), ["plan"]);
  assert.deepStrictEqual(names("model:GPT-4O-MINI"), ["plan"]);
  assert.deepStrictEqual(names("error:TimeoutError"), ["get_weather"]);
  assert.deepStrictEqual(names("kind:llm"), ["plan", "answer"]);
  assert.deepStrictEqual(names("status:error"), ["get_weather"]);
  assert.deepStrictEqual(names("status:slow"), ["answer"]);
  assert.deepStrictEqual(names("status:cancelled"), ["root"]);
  assert.deepStrictEqual(names("name:ANS"), ["answer"]);
});

test("model: is the exact model, model:x* a prefix", () => {
  assert.deepStrictEqual(names("model:gpt-4o"), ["answer"]);
  assert.deepStrictEqual(names("model:gpt-4o*"), ["plan", "answer"]);
  assert.deepStrictEqual(names("model:gpt*"), ["plan", "answer"]);
  assert.deepStrictEqual(names("model:gpt"), []);
  assert.deepStrictEqual(names("-model:gpt-4o kind:llm"), ["plan"]);
});

test("numeric comparisons", () => {
  assert.deepStrictEqual(names("duration>500ms"), ["get_weather", "answer", "root"]);
  assert.deepStrictEqual(names("duration<1s"), ["plan", "answer"]);
  assert.deepStrictEqual(names("self>100ms"), ["get_weather", "answer"]);
  assert.deepStrictEqual(names("tokens>1000"), ["answer"]);
  assert.deepStrictEqual(names("cost>0"), ["plan"]);
});

test("key:value looks in inputs, metadata and attributes", () => {
  assert.deepStrictEqual(names("city:paris"), ["get_weather"]);
  assert.deepStrictEqual(names("route:forecast"), ["get_weather"]);
  assert.deepStrictEqual(names("city:rome"), []);
});

test("free text searches names, inputs, outputs and errors; all words must match", () => {
  assert.deepStrictEqual(names("louvre"), ["answer"]);
  assert.deepStrictEqual(names("trip"), ["plan"]);
  assert.deepStrictEqual(names("weather paris"), ["get_weather"]);
  assert.deepStrictEqual(names("weather rome"), []);
  assert.deepStrictEqual(names("kind:llm -louvre"), ["plan"]);
  assert.deepStrictEqual(names(""), NODES.map((n) => n.name));
});
