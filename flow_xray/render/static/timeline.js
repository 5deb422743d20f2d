// timeline.js -> FX.timeline: the trace's time window and the views drawn through it --
// the waterfall bars, a time ruler with round ticks, a minimap of the whole run showing the
// window, and a flame chart of the same calls (time across, depth down).
// Zoom: ctrl + wheel (a trackpad pinch) anywhere on the timeline, plain wheel over the ruler or
// the minimap, + / - / 0 keys, the toolbar buttons, double-click a call. Pan: drag the bars,
// the ruler or the minimap's window, horizontal wheel, Shift + arrow keys.
// Public: Timeline.

FX.timeline = (function () {
  const U = FX.util;
  const RU = FX.ruler;
  const P = FX.panes;
  const MIN_GAP = 84; // pixels between ruler ticks: room for a label like "1500 ms"
  const FLAME_ROW = 20;
  const MAX_BOXES = 4000; // flame boxes drawn per frame; tiny calls merge into one box per row
  const MAP_H = 30;

  // app: the TraceApp -- nodes, parent, depth, t0, span, rows, selected, select(i, reveal).
  function Timeline(app) {
    this.app = app;
    this.span = app.span;
    this.v0 = 0;
    this.v1 = this.span;
    this.minSpan = Math.max(this.span * 1e-6, 1e-6);
    this.mode = P.pref("timeline") === "flame" ? "flame" : "waterfall";
    this.axes = [];
    this.redraw = U.perFrame(() => this.render());
  }

  // Where a call lies on the run's clock, relative to its start: [start, end] in ms.
  Timeline.prototype.extent = function (i) {
    const node = this.app.nodes[i];
    const start = (U.isNum(node.start_ms) ? node.start_ms : 0) - this.app.t0;
    const end = U.isNum(node.latency_ms) ? start + node.latency_ms : this.span;
    return [start, end];
  };

  // The flame chart's row of every call: below its parent, and never on a row where another
  // call is still running (concurrent siblings -- threads, async tasks -- stack up). Calls are
  // placed in start order (a child never before its parent), each on the first free row.
  Timeline.prototype.flameRows = function () {
    if (this.rowOf) return this.rowOf;
    const app = this.app;
    const n = app.nodes.length;
    const start = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const p = app.parent[i];
      start[i] = Math.max(this.extent(i)[0], p >= 0 ? start[p] : -Infinity);
    }
    const order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort(function (a, b) { return start[a] - start[b] || a - b; });
    const rowOf = new Int32Array(n);
    const busy = []; // row -> when its last call ends
    let rows = 0;
    for (let k = 0; k < n; k++) {
      const i = order[k];
      const p = app.parent[i];
      let r = p >= 0 ? rowOf[p] + 1 : 0;
      while (r < busy.length && busy[r] > start[i] + 1e-9) r++;
      rowOf[i] = r;
      busy[r] = Math.max(start[i], this.extent(i)[1]);
      rows = Math.max(rows, r + 1);
    }
    this.rowOf = rowOf;
    this.rowCount = rows;
    return rowOf;
  };

  // -- the window ------------------------------------------------------------------

  Timeline.prototype.setWindow = function (v0, v1) {
    let w = Math.min(this.span, Math.max(this.minSpan, v1 - v0));
    let a = Math.max(0, Math.min(v0, this.span - w));
    if (!isFinite(a)) a = 0;
    if (a === this.v0 && a + w === this.v1) return;
    this.v0 = a;
    this.v1 = a + w;
    this.redraw();
  };

  Timeline.prototype.zoom = function (factor, at) {
    const w = this.v1 - this.v0;
    if (at === undefined) at = this.v0 + w / 2;
    const next = Math.min(this.span, Math.max(this.minSpan, w / factor));
    const a = at - (at - this.v0) * (next / w);
    this.setWindow(a, a + next);
  };

  Timeline.prototype.pan = function (ms) {
    this.setWindow(this.v0 + ms, this.v1 + ms);
  };

  Timeline.prototype.reset = function () {
    this.setWindow(0, this.span);
  };

  Timeline.prototype.zoomTo = function (i) {
    const e = this.extent(i);
    const pad = Math.max((e[1] - e[0]) * 0.05, this.minSpan);
    this.setWindow(e[0] - pad, e[1] + pad);
  };

  // A selected call entirely outside the window brings the window to it (same width).
  Timeline.prototype.onSelect = function (i) {
    const e = this.extent(i);
    const w = this.v1 - this.v0;
    if (e[1] < this.v0 || e[0] > this.v1) {
      const mid = (e[0] + Math.min(e[1], e[0] + w)) / 2;
      this.setWindow(mid - w / 2, mid + w / 2);
    }
    if (this.mode === "flame") {
      const y = this.flameRows()[i] * FLAME_ROW;
      const body = this.flameBody;
      if (y < body.scrollTop || y + FLAME_ROW > body.scrollTop + body.clientHeight) {
        body.scrollTop = y - body.clientHeight / 2;
      }
      this.redraw();
    }
  };

  // -- the waterfall's bars -------------------------------------------------------

  Timeline.prototype.placeBar = function (bar, i) {
    const e = this.extent(i);
    const w = this.v1 - this.v0;
    if (e[1] < this.v0 || e[0] > this.v1) {
      bar.style.display = "none";
      return;
    }
    const a = Math.max(e[0], this.v0 - w * 0.01);
    const b = Math.min(e[1], this.v1 + w * 0.01);
    bar.style.display = "";
    bar.style.left = ((a - this.v0) / w) * 100 + "%";
    bar.style.width = Math.max(((b - a) / w) * 100, 0.25) + "%";
  };

  // -- building the pieces --------------------------------------------------------

  Timeline.prototype.toolbar = function () {
    const self = this;
    const bar = U.el("div", "fx-timeline-bar");
    const modes = U.el("div", "fx-seg");
    this.modeButtons = {};
    for (const mode of ["waterfall", "flame"]) {
      const b = U.el("button", "fx-btn", mode === "flame" ? "Flame" : "Waterfall");
      b.type = "button";
      b.dataset.mode = mode;
      b.title = mode === "flame" ? "Flame chart: calls by depth over time" : "Waterfall: one row per call";
      b.addEventListener("click", function () { self.setMode(mode); });
      modes.appendChild(b);
      this.modeButtons[mode] = b;
    }
    bar.appendChild(modes);
    this.map = U.el("div", "fx-minimap");
    this.map.title = "The whole run: drag the window to pan, drag elsewhere to zoom to that range";
    this.canvas = U.el("canvas", "fx-minimap-canvas");
    this.map.appendChild(this.canvas);
    this.lens = U.el("div", "fx-minimap-window");
    this.map.appendChild(this.lens);
    bar.appendChild(this.map);
    const button = function (text, title, fn) {
      const b = U.el("button", "fx-btn fx-zoom-btn", text);
      b.type = "button";
      b.title = title;
      b.addEventListener("click", fn);
      bar.appendChild(b);
    };
    button("\u2212", "Zoom out ( - )", function () { self.zoom(1 / 1.6); });
    button("+", "Zoom in ( + )", function () { self.zoom(1.6); });
    button("All", "Show the whole run ( 0 )", function () { self.reset(); });
    this.label = U.el("span", "fx-window-label", "");
    bar.appendChild(this.label);
    this._bindMinimap();
    return bar;
  };

  // A ruler inside `cell` (which spans exactly the bars' track).
  Timeline.prototype.axis = function (cell) {
    cell.classList.add("fx-axis");
    this.axes.push(cell);
    return cell;
  };

  Timeline.prototype.flameView = function () {
    this.flame = U.el("div", "fx-flame-pane");
    const head = U.el("div", "fx-flame-head");
    this.flameAxis = this.axis(U.el("div", "fx-flame-axis"));
    head.appendChild(this.flameAxis);
    this.flame.appendChild(head);
    this.flameBody = U.el("div", "fx-flame");
    this.flameBody.tabIndex = 0;
    this.flameInner = U.el("div", "fx-flame-inner");
    this.flameBody.appendChild(this.flameInner);
    this.flame.appendChild(this.flameBody);
    const self = this;
    this.flameBody.addEventListener("click", function (e) {
      const box = e.target.closest(".fx-flame-box");
      if (box && box._fxItem !== undefined && !self.dragged) self.app.select(box._fxItem, true);
    });
    this.flameBody.addEventListener("dblclick", function (e) {
      const box = e.target.closest(".fx-flame-box");
      if (box && box._fxItem !== undefined) self.zoomTo(box._fxItem);
    });
    this.flameBody.addEventListener("scroll", this.redraw);
    return this.flame;
  };

  // Wheel, drag and keys on the whole timeline pane (`pane` holds the head, rows and flame).
  Timeline.prototype.bind = function (pane, head, rowsScroller) {
    const self = this;
    this.pane = pane;
    this.head = head;
    this.scroller = rowsScroller;
    pane.addEventListener("wheel", function (e) {
      const track = self._trackAt(e);
      const onRuler = e.target.closest(".fx-axis, .fx-minimap");
      if (!track) return;
      if (e.ctrlKey || onRuler) {
        e.preventDefault();
        self.zoom(Math.exp(-e.deltaY * (e.ctrlKey ? 0.01 : 0.0025)), track.at);
      } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        e.preventDefault();
        const px = e.shiftKey && !e.deltaX ? e.deltaY : e.deltaX;
        self.pan((px / track.width) * track.ms);
      }
    }, { passive: false });
    pane.addEventListener("pointerdown", function (e) {
      if (e.button !== 0) return;
      const track = self._trackAt(e);
      if (!track || e.target.closest(".fx-minimap")) return;
      self.dragged = false;
      const x = e.clientX;
      const v0 = self.v0;
      const move = function (ev) {
        const dx = ev.clientX - x;
        if (!self.dragged && Math.abs(dx) < 5) return;
        self.dragged = true;
        pane.classList.add("fx-panning");
        const w = self.v1 - self.v0;
        self.setWindow(v0 - (dx / track.width) * w, v0 - (dx / track.width) * w + w);
      };
      const up = function () {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", up);
        pane.classList.remove("fx-panning");
        setTimeout(function () { self.dragged = false; }, 0);
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", up);
    });
    // A drag that panned is not also a click on the row it ended on.
    pane.addEventListener("click", function (e) {
      if (self.dragged) { e.stopPropagation(); e.preventDefault(); }
    }, true);
    pane.addEventListener("dblclick", function (e) {
      const row = e.target.closest(".fx-trace-row");
      if (row && row._fxItem !== undefined && e.target.closest(".fx-cell-bar")) self.zoomTo(row._fxItem);
    });
    window.addEventListener("keydown", function (e) { self._key(e); }, true);
    if (window.ResizeObserver) new ResizeObserver(this.redraw).observe(pane);
    this.setMode(this.mode);
  };

  // The time track under the pointer: {at (ms under it), width (px), ms (window width)}.
  Timeline.prototype._trackAt = function (e) {
    const el = e.target.closest(".fx-cell-bar, .fx-flame-axis, .fx-flame, .fx-minimap");
    if (!el) return null;
    const r = el.getBoundingClientRect();
    if (!r.width) return null;
    const f = Math.max(0, Math.min(1, (e.clientX - r.left) / r.width));
    if (el.classList.contains("fx-minimap")) return { at: f * this.span, width: r.width, ms: this.span };
    const w = this.v1 - this.v0;
    return { at: this.v0 + f * w, width: r.width, ms: w };
  };

  Timeline.prototype._key = function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (this.app.help && this.app.help.isOpen()) return; // the help overlay is modal
    const tag = e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    const w = this.v1 - this.v0;
    if (e.key === "+" || e.key === "=") this.zoom(1.6);
    else if (e.key === "-" || e.key === "_") this.zoom(1 / 1.6);
    else if (e.key === "0") this.reset();
    else if (e.shiftKey && e.key === "ArrowLeft") this.pan(-w / 5);
    else if (e.shiftKey && e.key === "ArrowRight") this.pan(w / 5);
    else if (e.key === "z" && this.app.selected >= 0) this.zoomTo(this.app.selected);
    else return;
    e.preventDefault();
    e.stopPropagation(); // Shift + arrows are not also tree moves
  };

  Timeline.prototype._bindMinimap = function () {
    const self = this;
    this.map.addEventListener("pointerdown", function (e) {
      if (e.button !== 0) return;
      e.preventDefault();
      const r = self.map.getBoundingClientRect();
      const msAt = function (x) { return Math.max(0, Math.min(1, (x - r.left) / r.width)) * self.span; };
      const start = msAt(e.clientX);
      const grab = e.target === self.lens;
      const v0 = self.v0;
      const w = self.v1 - self.v0;
      let moved = false;
      const move = function (ev) {
        if (!moved && Math.abs(ev.clientX - e.clientX) < 3) return;
        moved = true;
        const now = msAt(ev.clientX);
        if (grab) self.setWindow(v0 + now - start, v0 + now - start + w);
        else self.setWindow(Math.min(start, now), Math.max(start, now));
      };
      const up = function () {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", up);
        if (!moved && !grab) self.setWindow(start - w / 2, start + w / 2);
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", up);
    });
  };

  Timeline.prototype.setMode = function (mode) {
    this.mode = mode;
    P.pref("timeline", mode);
    const flame = mode === "flame";
    if (this.head) this.head.style.display = flame ? "none" : "";
    if (this.scroller) this.scroller.style.display = flame ? "none" : "";
    if (this.flame) this.flame.style.display = flame ? "" : "none";
    for (const m in this.modeButtons) {
      this.modeButtons[m].setAttribute("aria-pressed", m === mode ? "true" : "false");
    }
    this.mapWidth = 0; // the minimap is redrawn at its new size
    this.redraw();
  };

  // -- drawing ----------------------------------------------------------------------

  Timeline.prototype.render = function () {
    const w = this.v1 - this.v0;
    // The head has no scrollbar; line its ruler up with the rows' tracks.
    if (this.head && this.scroller) {
      this.head.style.paddingRight = Math.max(0, this.scroller.offsetWidth - this.scroller.clientWidth) + "px";
    }
    for (const axis of this.axes) {
      if (axis.offsetParent === null) continue;
      const ticks = drawRuler(axis, this.v0, this.v1);
      if (this.pane && ticks.length > 1) { // the rows' grid lines fall on the ticks
        this.pane.style.setProperty("--fx-grid-step", (ticks[1].x - ticks[0].x).toFixed(2) + "px");
        this.pane.style.setProperty("--fx-grid-offset", ticks[0].x.toFixed(2) + "px");
      }
    }
    this.lens.style.left = (this.v0 / this.span) * 100 + "%";
    this.lens.style.width = Math.max((w / this.span) * 100, 0.4) + "%";
    const whole = this.v0 <= 0 && this.v1 >= this.span;
    this.label.textContent = whole ? "whole run \u00b7 " + U.fmtMs(this.span)
      : U.fmtMs(this.v0) + " \u2013 " + U.fmtMs(this.v1) + " of " + U.fmtMs(this.span);
    this.drawMinimap();
    if (this.mode === "flame") this.drawFlame();
    else this.app.rows.render();
  };

  function drawRuler(cell, v0, v1) {
    const width = cell.clientWidth;
    const ticks = RU.ticks(v0, v1, width, MIN_GAP);
    U.clear(cell);
    for (const t of ticks) {
      const tick = U.el("span", "fx-tick", t.label);
      tick.style.left = t.x + "px";
      tick.dataset.ms = String(t.ms);
      // Labels near the ends are kept inside the track instead of centred on their tick.
      if (t.x < 30) tick.classList.add("start");
      else if (t.x > width - 30) tick.classList.add("end");
      cell.appendChild(tick);
    }
    cell.dataset.step = String(ticks.length > 1 ? Number((ticks[1].ms - ticks[0].ms).toPrecision(12)) : 0);
    return ticks;
  }

  Timeline.prototype.drawMinimap = function () {
    const width = this.map.clientWidth;
    if (!width || width === this.mapWidth) return;
    this.mapWidth = width;
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(MAP_H * ratio);
    const ctx = this.canvas.getContext("2d");
    if (!ctx) return;
    const style = getComputedStyle(this.map);
    const colour = {
      ok: style.getPropertyValue("--ok").trim() || "#16a34a",
      slow: style.getPropertyValue("--slow").trim() || "#d97706",
      error: style.getPropertyValue("--error").trim() || "#dc2626",
    };
    const nodes = this.app.nodes;
    let deepest = 0;
    for (let i = 0; i < nodes.length; i++) deepest = Math.max(deepest, this.app.depth[i]);
    const lanes = Math.min(deepest + 1, 10);
    const laneH = (MAP_H * ratio) / lanes;
    const scale = this.canvas.width / this.span;
    for (const status of ["ok", "slow", "error"]) { // errors drawn last, on top
      ctx.fillStyle = colour[status];
      for (let i = 0; i < nodes.length; i++) {
        const own = nodes[i].view_status === "slow" || nodes[i].view_status === "error" ? nodes[i].view_status : "ok";
        if (own !== status) continue;
        const e = this.extent(i);
        const lane = Math.min(this.app.depth[i], lanes - 1);
        ctx.fillRect(e[0] * scale, lane * laneH + 1, Math.max((e[1] - e[0]) * scale, 1), Math.max(laneH - 2, 1));
      }
    }
  };

  Timeline.prototype.drawFlame = function () {
    const app = this.app;
    const pad = parseFloat(getComputedStyle(this.flameBody).paddingLeft) || 0;
    const width = this.flameBody.clientWidth - 2 * pad;
    if (width <= 0) return;
    const w = this.v1 - this.v0;
    const top = this.flameBody.scrollTop;
    const height = this.flameBody.clientHeight || 400;
    const firstRow = Math.floor(top / FLAME_ROW) - 2;
    const lastRow = Math.ceil((top + height) / FLAME_ROW) + 2;
    const frag = document.createDocumentFragment();
    const dense = new Map(); // row -> [x0, x1] of tiny calls being merged
    const rowOf = this.flameRows();
    let boxes = 0;
    const flush = function (depth) {
      const run = dense.get(depth);
      if (!run) return;
      const el = U.el("div", "fx-flame-box fx-flame-dense");
      el.style.transform = "translate(" + run[0].toFixed(1) + "px," + depth * FLAME_ROW + "px)";
      el.style.width = Math.max(run[1] - run[0], 1).toFixed(1) + "px";
      el.title = "calls too short to draw at this zoom";
      frag.appendChild(el);
      dense.delete(depth);
      boxes++;
    };
    for (let i = 0; i < app.nodes.length; i++) {
      const d = rowOf[i];
      if (d < firstRow || d > lastRow || boxes >= MAX_BOXES) continue;
      const e = this.extent(i);
      if (e[1] < this.v0 || e[0] > this.v1) continue;
      const x0 = ((Math.max(e[0], this.v0) - this.v0) / w) * width;
      const x1 = ((Math.min(e[1], this.v1) - this.v0) / w) * width;
      if (x1 - x0 < 3 && i !== app.selected) {
        const run = dense.get(d);
        if (run && x0 <= run[1] + 1) run[1] = Math.max(run[1], x1);
        else { flush(d); dense.set(d, [x0, x1]); }
        continue;
      }
      const node = app.nodes[i];
      const el = U.el("div", "fx-flame-box " + (node.view_status || "ok") +
        (i === app.selected ? " selected" : "") + (app.matches && app.matches[i] ? " fx-hit" : ""));
      el.style.transform = "translate(" + x0.toFixed(1) + "px," + d * FLAME_ROW + "px)";
      el.style.width = Math.max(x1 - x0, 2).toFixed(1) + "px";
      if (x1 - x0 > 28) el.textContent = U.nameOf(node);
      el.title = U.nameOf(node) + " \u00b7 " + U.fmtMs(node.latency_ms);
      el._fxItem = i;
      frag.appendChild(el);
      boxes++;
    }
    for (const d of Array.from(dense.keys())) flush(d);
    U.clear(this.flameInner);
    this.flameInner.style.height = this.rowCount * FLAME_ROW + "px";
    this.flameInner.appendChild(frag);
  };

  return { Timeline: Timeline };
})();
