// panes.js -> FX.panes: resizable, collapsible panes and the layout preferences kept across reloads.
// The trace page has three panes -- graph, tree (with the timeline) and detail -- split by
// draggable bars (also keyboard: focus a bar, arrows resize, Enter resets); the footer has a
// show / hide button per pane. Sizes and hidden panes are kept in localStorage (when the
// browser allows it for the page; otherwise for the visit only).
// Public: Layout, pref(name, value).

FX.panes = (function () {
  const U = FX.util;
  const KEY = "flow-xray.layout";
  const MIN_TOP = 70;
  const MIN_SIDE = 220;
  const MIN_REST = 260;
  let memory = {};

  function load() {
    try {
      const raw = window.localStorage.getItem(KEY);
      const value = raw ? JSON.parse(raw) : {};
      return value && typeof value === "object" ? value : {};
    } catch (e) {
      return memory; // storage blocked (some browsers, for file:// pages)
    }
  }

  // pref(name) reads a kept preference; pref(name, value) keeps one.
  function pref(name, value) {
    const state = load();
    if (value === undefined) return state[name];
    state[name] = value;
    memory = state;
    try { window.localStorage.setItem(KEY, JSON.stringify(state)); } catch (e) { /* kept in memory */ }
    return value;
  }

  // opts: {main, left, top?, bottom?, side, footer, names: {top, bottom, side}, onResize()}
  function Layout(opts) {
    this.opts = opts;
    this.key = opts.key || "panes";
    const kept = pref(this.key);
    this.state = Object.assign({ top: null, side: null, hidden: {} }, kept && typeof kept === "object" ? kept : {});
    this.state.hidden = Object.assign({}, this.state.hidden);
    this.sideBar = splitter("fx-split fx-split-v", "Resize the detail pane");
    opts.main.insertBefore(this.sideBar, opts.side);
    this._drag(this.sideBar, "side");
    if (opts.top && opts.bottom) {
      this.topBar = splitter("fx-split fx-split-h", "Resize the graph pane");
      opts.left.insertBefore(this.topBar, opts.bottom);
      this._drag(this.topBar, "top");
    }
    this.toggles = {};
    const group = U.el("div", "fx-pane-toggles");
    group.appendChild(U.el("span", "fx-muted", "Panes"));
    for (const pane of ["top", "bottom", "side"]) {
      if (!opts[pane]) continue;
      const b = U.el("button", "fx-btn fx-pane-toggle", opts.names[pane]);
      b.type = "button";
      b.dataset.pane = pane;
      b.title = "Show or hide the " + opts.names[pane].toLowerCase() + " pane";
      b.addEventListener("click", () => this.toggle(pane));
      group.appendChild(b);
      this.toggles[pane] = b;
    }
    opts.footer.appendChild(group);
    this.apply();
  }

  function splitter(cls, label) {
    const bar = U.el("div", cls);
    bar.tabIndex = 0;
    bar.setAttribute("role", "separator");
    bar.setAttribute("aria-label", label);
    bar.title = label + " (drag; double-click resets)";
    return bar;
  }

  Layout.prototype.toggle = function (pane) {
    const hidden = this.state.hidden;
    hidden[pane] = !hidden[pane];
    // The left column never goes empty: hiding its last pane shows the other one.
    if (hidden.top && hidden.bottom) hidden[pane === "top" ? "bottom" : "top"] = false;
    this.apply();
    this.save();
  };

  Layout.prototype.apply = function () {
    const o = this.opts;
    const s = this.state;
    const h = s.hidden;
    o.side.style.display = h.side ? "none" : "";
    this.sideBar.style.display = h.side ? "none" : "";
    o.main.style.gridTemplateColumns = h.side ? "minmax(0, 1fr)"
      : "minmax(0, 1fr) 6px " + (s.side ? s.side + "px" : "clamp(260px, 32vw, 420px)");
    if (this.topBar) {
      o.top.style.display = h.top ? "none" : "";
      o.bottom.style.display = h.bottom ? "none" : "";
      this.topBar.style.display = h.top || h.bottom ? "none" : "";
      o.top.style.flex = h.bottom ? "1 1 auto" : s.top ? "0 0 " + s.top + "px" : "";
    }
    for (const pane in this.toggles) {
      this.toggles[pane].setAttribute("aria-pressed", h[pane] ? "false" : "true");
      this.toggles[pane].classList.toggle("off", !!h[pane]);
    }
    if (o.onResize) o.onResize();
  };

  Layout.prototype.save = function () {
    pref(this.key, this.state);
  };

  // Clamp a pane size to what the window leaves room for.
  Layout.prototype._clamp = function (which, px) {
    if (which === "side") {
      const room = this.opts.main.getBoundingClientRect().width;
      return Math.round(Math.max(MIN_SIDE, Math.min(px, room - MIN_REST)));
    }
    const room = this.opts.left.getBoundingClientRect().height;
    return Math.round(Math.max(MIN_TOP, Math.min(px, room - MIN_TOP)));
  };

  Layout.prototype._drag = function (bar, which) {
    const self = this;
    const current = function () {
      const r = (which === "side" ? self.opts.side : self.opts.top).getBoundingClientRect();
      return which === "side" ? r.width : r.height;
    };
    const set = function (px) {
      self.state[which] = px === null ? null : self._clamp(which, px);
      self.apply();
    };
    bar.addEventListener("pointerdown", function (e) {
      if (e.button !== 0) return;
      e.preventDefault();
      const start = which === "side" ? e.clientX : e.clientY;
      const size = current();
      bar.classList.add("dragging");
      const move = function (ev) {
        const delta = (which === "side" ? ev.clientX : ev.clientY) - start;
        set(which === "side" ? size - delta : size + delta);
      };
      const up = function () {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", up);
        bar.classList.remove("dragging");
        self.save();
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", up);
    });
    bar.addEventListener("dblclick", function () { set(null); self.save(); });
    bar.addEventListener("keydown", function (e) {
      const grow = which === "side" ? { ArrowLeft: 20, ArrowRight: -20 } : { ArrowDown: 20, ArrowUp: -20 };
      if (e.key in grow) set(current() + grow[e.key]);
      else if (e.key === "Enter") set(null);
      else return;
      e.preventDefault();
      e.stopPropagation();
      self.save();
    });
  };

  return { Layout: Layout, pref: pref };
})();
