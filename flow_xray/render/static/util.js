// util.js: DOM construction and number formatting shared by every view.
// All text reaches the page through textContent; nothing here parses markup.

const SVG_NS = "http://www.w3.org/2000/svg";

FX.el = function (tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
};

FX.svg = function (tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const key in attrs) node.setAttribute(key, String(attrs[key]));
  return node;
};

FX.clear = function (node) {
  while (node.firstChild) node.removeChild(node.firstChild);
};

FX.readPayload = function () {
  return JSON.parse(document.getElementById("fx-data").textContent);
};

FX.isNum = function (v) {
  return typeof v === "number" && isFinite(v);
};

// Invisible characters that reorder or hide text (bidi controls, zero-width
// marks) are shown as <U+XXXX>, so a debugging view never spoofs what a string is.
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

FX.visible = function (text) {
  return String(text).replace(INVISIBLE, function (ch) {
    return "<U+" + ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + ">";
  });
};

// A call's name as text everywhere (row, box, detail, search); "?" when it has none,
// as in the DOT labels.
FX.nameOf = function (node) {
  return node.name === null || node.name === undefined ? "?" : FX.visible(node.name);
};

FX.fmtMs = function (ms) {
  if (!FX.isNum(ms)) return "never ended";
  if (ms >= 1000) return (ms / 1000).toFixed(2) + " s";
  if (ms >= 10) return ms.toFixed(1) + " ms";
  return ms.toFixed(2) + " ms";
};

FX.fmtInt = function (n) {
  return Math.round(n).toLocaleString("en-US");
};

FX.fmtCount = function (n, one, many) {
  return FX.fmtInt(n) + " " + (n === 1 ? one : many);
};

FX.fmtCost = function (usd) {
  if (!FX.isNum(usd)) return "cost unknown";
  if (usd !== 0 && Math.abs(usd) < 0.0001) return "$" + usd.toPrecision(2);
  return "$" + usd.toFixed(4);
};

FX.fmtTokensShort = function (n) {
  if (n >= 10000) return (n / 1000).toFixed(1) + "k tok";
  return FX.fmtInt(n) + " tok";
};

// Cut a string for a box of fixed width; the full text stays in the detail panel.
FX.ellipsis = function (text, max) {
  text = String(text);
  return text.length <= max ? text : text.slice(0, Math.max(1, max - 1)) + "\u2026";
};

// Call fn at most once per animation frame, with the latest arguments.
FX.perFrame = function (fn) {
  let pending = false;
  return function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () {
      pending = false;
      fn();
    });
  };
};

FX.debounce = function (fn, ms) {
  let timer = 0;
  return function () {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
};

// Mark the page ready for tests and benchmarks once the first frame is painted.
FX.markReady = function () {
  requestAnimationFrame(function () {
    requestAnimationFrame(function () {
      document.body.dataset.readyMs = String(Math.round(performance.now()));
      document.body.dataset.ready = "1";
    });
  });
};

// Header with a title, a row of figure chips and a slot for controls.
FX.header = function (title) {
  const header = FX.el("header", "fx-header");
  const brand = FX.el("div", "fx-brand");
  brand.appendChild(FX.el("span", "fx-logo", "flow-xray"));
  brand.appendChild(FX.el("h1", "fx-title", title));
  header.appendChild(brand);
  const chips = FX.el("div", "fx-chips");
  header.appendChild(chips);
  const controls = FX.el("div", "fx-controls");
  header.appendChild(controls);
  return { header: header, chips: chips, controls: controls };
};

FX.chip = function (parent, value, label, extraClass) {
  const chip = FX.el("div", "fx-chip" + (extraClass ? " " + extraClass : ""));
  chip.appendChild(FX.el("b", null, value));
  chip.appendChild(FX.el("span", null, label));
  parent.appendChild(chip);
  return chip;
};
