// payload.js: which JSON texts the search may read unparsed (isCanonical).
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { load } = require("./load.js");

const P = load("payload.js").payload;

function roundTrips(text) {
  return JSON.stringify(JSON.parse(text)) === text;
}

test("compact texts of objects and arrays are canonical", () => {
  for (const text of [
    '{"step":12,"query":"question number 12"}',
    '{}', '[]', '[[],{}]', '{"a":{"b":[1,-2,true,false,null]}}',
    '{"q":"tab\\there \\"quoted\\" back\\\\slash\\nline"}',
    '{"text":"caf\u00e9 \ud83d\ude00 \u2028"}',
    '[123456789012345,-999999999999999,0]',
  ]) {
    assert.ok(P.isCanonical(text), text);
    assert.ok(roundTrips(text), text);
  }
});

test("texts JSON.stringify would write otherwise are not canonical", () => {
  for (const text of [
    '{"a": 1}', '{"a":1, "b":2}', ' {"a":1}', '{"a":1} ', '[1 ]',  // whitespace
    '[1.0]', '[1.5]', '[1e3]', '[1E3]', '[-0]', '[0.1]', '[1234567890123456]', '[01]',  // numbers
    '{"a":"\\u00e9"}', '{"a":"\\u001f"}', '{"a":"\\/"}',  // escapes
    '{"b":1,"2":2}', '{"0":1}', '{"a":1,"a":2}',  // keys reordered or merged
    '"text"', '5', 'null', 'true',  // not an object or array
    '{"a":"\ud800"}', '{"a":"\udc00x"}',  // lone surrogates
  ]) {
    assert.ok(!P.isCanonical(text), text);
  }
});

test("texts that are not JSON are never canonical", () => {
  for (const text of ['{', '[', '{"a"}', '{"a":}', '[1,]', '{"a":1,}', '{,}', '[,1]', '{}{}', '[]]', '{"a":1]',
    '["a]', '[tru]', '[nul]', '{a:1}', "{'a':1}", '[1,,2]', '{"a"::1}', '']) {
    assert.ok(!P.isCanonical(text), text);
  }
});

test("every canonical text of a generated corpus round-trips exactly", () => {
  let seed = 7;
  const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
  const pieces = ['"a"', '"A b"', '"\\n"', '"\\u0001"', '"\\u00e9"', '"0"', '"10"', "1", "-1", "0", "-0", "1.5",
    "2e5", "true", "null", "12345678901234567", " ", "{}", "[]"];
  function value(depth) {
    const r = next() % 10;
    if (depth > 3 || r < 5) return pieces[next() % pieces.length];
    const items = [];
    const count = next() % 4;
    if (r < 8) {
      for (let i = 0; i < count; i++) items.push(pieces[next() % 7] + (next() % 9 ? ":" : ": ") + value(depth + 1));
      return "{" + items.join(next() % 9 ? "," : ", ") + "}";
    }
    for (let i = 0; i < count; i++) items.push(value(depth + 1));
    return "[" + items.join(",") + "]";
  }
  let canonical = 0;
  for (let k = 0; k < 20000; k++) {
    const text = value(0);
    let valid = true;
    try { JSON.parse(text); } catch (err) { valid = false; }
    if (!P.isCanonical(text)) continue;
    assert.ok(valid && roundTrips(text), text);
    canonical++;
  }
  assert.ok(canonical > 1000, "the corpus holds canonical texts: " + canonical);
});
