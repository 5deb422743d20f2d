// ruler.js -> FX.ruler: round ticks for a time axis. Pure: no DOM.
// A tick step is 1, 2 or 5 x 10^k ms -- the smallest one that leaves at least `minGap` pixels
// between ticks -- and labels use the unit the step is counted in (µs, ms or s).
// Public: step(spanMs, widthPx, minGapPx), ticks(v0, v1, widthPx, minGapPx), label(ms, step).

FX.ruler = (function () {
  const MULTIPLES = [1, 2, 5];

  // The smallest 1/2/5 x 10^k (ms) whose ticks are at least minGapPx apart over widthPx.
  function step(spanMs, widthPx, minGapPx) {
    if (!(spanMs > 0) || !(widthPx > 0)) return 1;
    const least = (spanMs * minGapPx) / widthPx;
    let power = Math.pow(10, Math.floor(Math.log10(least)));
    for (;;) {
      for (const m of MULTIPLES) {
        const s = clean(m * power);
        if (s >= least) return s;
      }
      power *= 10;
    }
  }

  // Ticks at every multiple of the step inside [v0, v1]: {ms, x (pixels from v0), label}.
  function ticks(v0, v1, widthPx, minGapPx) {
    const span = v1 - v0;
    if (!(span > 0) || !(widthPx > 0)) return [];
    const s = step(span, widthPx, minGapPx);
    const out = [];
    for (let k = Math.ceil(v0 / s - 1e-9); k * s <= v1 + s * 1e-9; k++) {
      const ms = clean(k * s);
      out.push({ ms: ms, x: ((ms - v0) / span) * widthPx, label: label(ms, s) });
    }
    return out;
  }

  // A tick value in the unit of its step, with only the decimals the step needs.
  function label(ms, s) {
    let unit = "ms";
    let scale = 1;
    if (s >= 1000) { unit = "s"; scale = 1 / 1000; }
    else if (s < 1) { unit = "\u00b5s"; scale = 1000; }
    const digits = Math.max(0, -Math.floor(Math.log10(s * scale) + 1e-9));
    return (ms * scale).toFixed(digits) + " " + unit;
  }

  // 0.1 * 3 is 0.30000000000000004: keep twelve significant digits.
  function clean(x) {
    return Number(x.toPrecision(12));
  }

  return { step: step, ticks: ticks, label: label };
})();
