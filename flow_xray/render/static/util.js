// util.js -> FX.util: DOM construction and number formatting shared by every view.
// All text reaches the page through textContent; nothing here parses markup.
// Public: el, svg, clear, readPayload, isNum, visible, nameOf, tokens, copyText, copyButton, download, fmtMs, fmtInt, fmtCount, fmtCost, fmtTokensShort, plainNumber, ellipsis, perFrame, debounce, markReady, header, chip.

FX.util = (function () {
  const SVG_NS = "http://www.w3.org/2000/svg";

  // Every text this makes is shown through visible(): no caller can forget it.
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = visible(text);
    return node;
  }

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const key in attrs) node.setAttribute(key, String(attrs[key]));
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function readPayload() {
    return JSON.parse(document.getElementById("fx-data").textContent);
  }

  function isNum(v) {
    return typeof v === "number" && isFinite(v);
  }

  // Invisible characters that reorder or hide text -- bidi controls (U+202A-U+202E,
  // U+2066-U+2069), zero-width marks (U+200B-U+200F, U+FEFF), every other format (Cf) and
  // control (Cc) character but newline, tab and CR, line/paragraph separators, lone surrogates
  // -- are shown as <U+XXXX>, so a debugging view never spoofs what a string is. The one
  // function for all text put on screen (el() applies it); idempotent.
  const INVISIBLE = /(?![\n\t\r])[\p{Cc}\p{Cf}\u2028\u2029]|\p{Cs}/gu;

  function visible(text) {
    return String(text).replace(INVISIBLE, function (ch) {
      return "<U+" + ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") + ">";
    });
  }

  // A call's name as text everywhere (row, box, detail, search); "?" when it has none,
  // as in the DOT labels.
  function nameOf(node) {
    return node.name === null || node.name === undefined ? "?" : visible(node.name);
  }

  // Total tokens a node reports itself (total_tokens, else prompt + completion).
  function tokens(node) {
    const meta = node.meta || {};
    if (isNum(meta.total_tokens)) return meta.total_tokens;
    return (isNum(meta.prompt_tokens) ? meta.prompt_tokens : 0) +
      (isNum(meta.completion_tokens) ? meta.completion_tokens : 0);
  }

  // Copy text to the clipboard: navigator.clipboard where the page may use it, else a
  // hidden textarea and execCommand. done(ok) is told whether it worked.
  function copyText(text, done) {
    const fallback = function () {
      const area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      let ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      area.remove();
      done(ok);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
    } else fallback();
  }

  // A small button that copies what text() returns and says so for a moment.
  function copyButton(label, text) {
    const button = el("button", "fx-btn fx-copy", label);
    button.type = "button";
    button.title = "Copy to the clipboard";
    button.addEventListener("click", function (e) {
      e.preventDefault();
      e.stopPropagation();
      copyText(text(), function (ok) {
        button.textContent = ok ? "Copied" : "Copy failed";
        setTimeout(function () { button.textContent = label; }, 1200);
      });
    });
    return button;
  }

  // Offer text as a file download (a Blob URL on a temporary link; no network).
  function download(name, text, type) {
    const url = URL.createObjectURL(new Blob([text], { type: type || "application/json" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 0);
  }

  // At most 4 significant digits, so a figure never outgrows its column: 2.84 ms, 646.5 ms,
  // 19.41 s, 123.4 s, 4,321 s.
  function fmtMs(ms) {
    if (!isNum(ms)) return "never ended";
    if (ms >= 100000) return fmtInt(ms / 1000) + " s";
    if (ms >= 10000) return (ms / 1000).toFixed(1) + " s";
    if (ms >= 1000) return (ms / 1000).toFixed(2) + " s";
    if (ms >= 10) return ms.toFixed(1) + " ms";
    return ms.toFixed(2) + " ms";
  }

  function fmtInt(n) {
    return Math.round(n).toLocaleString("en-US");
  }

  function fmtCount(n, one, many) {
    return fmtInt(n) + " " + (n === 1 ? one : many);
  }

  // Dollars as plain decimals, never exponents: cents from a dollar up ($1,234.57), else
  // `digits` (default 2) significant digits with trailing zeros dropped ($0.50, $0.012,
  // $0.00000064). The diff asks for 3, so two small costs that differ never print the same.
  function fmtCost(usd, digits) {
    if (!isNum(usd)) return "cost unknown";
    const sig = digits || 2;
    const size = Math.abs(usd);
    const sign = usd < 0 ? "-" : "";
    if (size >= 1) {
      return sign + "$" + size.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    }
    if (size === 0) return "$0.00";
    const decimals = Math.min(20, Math.max(2, sig - 1 - Math.floor(Math.log10(size))));
    let text = size.toFixed(decimals);
    while (/\.\d{3,}$/.test(text) && text.endsWith("0")) text = text.slice(0, -1);
    return sign + "$" + text;
  }

  // A number as the shortest plain decimal that reads back as it (6.4e-7 -> "0.00000064",
  // 1e21 -> "1000000000000000000000"): the same digits as String(n), never an exponent.
  function plainNumber(n) {
    const text = String(n);
    const m = /^(-?)(\d)(?:\.(\d+))?e([-+]\d+)$/.exec(text);
    if (!m) return text;
    const digits = m[2] + (m[3] || "");
    const exp = Number(m[4]);
    if (exp < 0) return m[1] + "0." + "0".repeat(-exp - 1) + digits;
    return m[1] + digits + "0".repeat(Math.max(0, exp - digits.length + 1));
  }

  function fmtTokensShort(n) {
    if (n >= 1e9) return (n / 1e9).toFixed(1) + "B tok";
    if (n >= 1e6) return (n / 1e6).toFixed(1) + "M tok";
    if (n >= 10000) return (n / 1000).toFixed(1) + "k tok";
    return fmtInt(n) + " tok";
  }

  // Cut a string for a box of fixed width; the full text stays in the detail panel.
  function ellipsis(text, max) {
    text = String(text);
    return text.length <= max ? text : text.slice(0, Math.max(1, max - 1)) + "\u2026";
  }

  // Call fn at most once per animation frame, with the latest arguments.
  function perFrame(fn) {
    let pending = false;
    return function () {
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () {
        pending = false;
        fn();
      });
    };
  }

  function debounce(fn, ms) {
    let timer = 0;
    return function () {
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  }

  // Mark the page ready for tests and benchmarks once the first frame is painted.
  function markReady() {
    requestAnimationFrame(function () {
      requestAnimationFrame(function () {
        document.body.dataset.readyMs = String(Math.round(performance.now()));
        document.body.dataset.ready = "1";
      });
    });
  }

  // Header with a title, a row of figure chips and a slot for controls.
  function header(title) {
    const header = el("header", "fx-header");
    const brand = el("div", "fx-brand");
    brand.appendChild(el("span", "fx-logo", "flow-xray"));
    brand.appendChild(el("h1", "fx-title", title));
    document.title = visible(title);
    header.appendChild(brand);
    const chips = el("div", "fx-chips");
    header.appendChild(chips);
    const controls = el("div", "fx-controls");
    header.appendChild(controls);
    return { header: header, chips: chips, controls: controls };
  }

  function chip(parent, value, label, extraClass) {
    const chip = el("div", "fx-chip" + (extraClass ? " " + extraClass : ""));
    chip.appendChild(el("b", null, value));
    chip.appendChild(el("span", null, label));
    parent.appendChild(chip);
    return chip;
  }

  return {
    el: el,
    svg: svg,
    clear: clear,
    readPayload: readPayload,
    isNum: isNum,
    visible: visible,
    nameOf: nameOf,
    tokens: tokens,
    copyText: copyText,
    copyButton: copyButton,
    download: download,
    fmtMs: fmtMs,
    fmtInt: fmtInt,
    fmtCount: fmtCount,
    fmtCost: fmtCost,
    fmtTokensShort: fmtTokensShort,
    plainNumber: plainNumber,
    ellipsis: ellipsis,
    perFrame: perFrame,
    debounce: debounce,
    markReady: markReady,
    header: header,
    chip: chip,
  };
})();
