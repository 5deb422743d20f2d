// graph_groups.js -> FX.graphGroups: fold a graph's boxes into groups named by their labels, and show gradients readably.
// Pure: no DOM. graph_app.js draws what these return.
//
// Grouping. A node's name is the first line of its label. A name of at least three dot-separated
// parts whose first two are identifier-like ("L1.N3.w2*x", "enc.head3.q") belongs to the inner
// group "L1.N3" (a neuron, in flow_xray.autodiff.nn's naming) inside the outer group "L1" (a
// layer). Any other name ("x0", "n12", "x1*w1 + x2*w2", "0.5.x") belongs to no group, so a graph
// without such labels is drawn as it always was. A group needs two members to count.
// A collapsed group is drawn as one box; a node is drawn by the outermost collapsed group that
// holds it, so collapsing layers hides their neurons' state, and expanding a layer shows its
// neurons as they were (collapsed or not). Edges between two drawn boxes are merged into one.
// Default: graphs over COLLAPSE_OVER nodes open with every neuron collapsed (a 3-layer MLP's loss
// over four samples, ~360 nodes, then opens as ~40 boxes; layers when no neuron counts);
// smaller graphs open expanded.
//
// Gradients. A label line "grad: G" (the form flow-xray's DOT and viewer labels use) is shown as
// fmtGrad(G): 4 significant digits, always signed, exponent form below 1e-3 or from 1e5, so every
// gradient reads the same way at a glance; the detail panel keeps the full-precision label.
// gradLevel buckets |G| against the graph's largest |G| for a colour mark on the box.
//
// Public: COLLAPSE_OVER, groupPath, buildGroups, defaultCollapsed, collapseLevel, fold, foldEdges,
// groupLines, parseGrad, gradOf, fmtGrad, gradLevel, gradClass, showGrads.

FX.graphGroups = (function () {
  const COLLAPSE_OVER = 150;
  const PART = /^[A-Za-z_][A-Za-z0-9_-]*$/;
  const KINDS = ["layer", "neuron"];

  // The group keys of a name, outermost first: ["L1", "L1.N3"], or [] for an ungrouped name.
  function groupPath(name) {
    const parts = String(name).split(".");
    if (parts.length < 3 || !PART.test(parts[0]) || !PART.test(parts[1]) || !parts.slice(2).join(".")) {
      return [];
    }
    return [parts[0], parts[0] + "." + parts[1]];
  }

  // names[i]: node i's name. Returns {groups: Map key -> {key, level, kind, parent, members,
  // children}, keys: group keys in first-appearance order, paths: per node its group keys
  // (outermost first, only groups of two or more members)}.
  function buildGroups(names) {
    const all = new Map();
    const raw = names.map(function (name, i) {
      const path = groupPath(name);
      path.forEach(function (key, level) {
        if (!all.has(key)) {
          all.set(key, {
            key: key, level: level, kind: KINDS[level], parent: level ? path[0] : null, members: [], children: [],
          });
        }
        all.get(key).members.push(i);
      });
      return path;
    });
    const groups = new Map();
    for (const group of all.values()) if (group.members.length >= 2) groups.set(group.key, group);
    for (const group of groups.values()) {
      if (group.parent !== null && groups.has(group.parent)) groups.get(group.parent).children.push(group.key);
    }
    const paths = raw.map(function (path) { return path.filter(function (key) { return groups.has(key); }); });
    return { groups: groups, keys: Array.from(groups.keys()), paths: paths };
  }

  // The keys of every group of one kind ("layer" or "neuron"), in order.
  function keysOf(model, kind) {
    return model.keys.filter(function (key) { return model.groups.get(key).kind === kind; });
  }

  // The collapsed set a graph of `count` nodes opens with: over COLLAPSE_OVER, every neuron (or,
  // when no neuron has two members, every layer); else nothing.
  function defaultCollapsed(model, count) {
    if (count <= COLLAPSE_OVER) return new Set();
    const neurons = keysOf(model, "neuron");
    return new Set(neurons.length ? neurons : keysOf(model, "layer"));
  }

  // The collapsed set of one of the three views: "none" (all expanded), "neuron" (every neuron
  // collapsed) or "layer" (every layer, and every neuron under it, so expanding a layer shows
  // its neurons as boxes).
  function collapseLevel(model, level) {
    if (level === "layer") return new Set(model.keys);
    if (level === "neuron") return new Set(keysOf(model, "neuron"));
    return new Set();
  }

  // What is drawn: owner[i] is node i's own index when it is drawn, else the key of the outermost
  // collapsed group holding it; keys lists the drawn boxes (node indices and group keys) in the
  // order of their first node.
  function fold(model, collapsed) {
    const owner = [];
    const keys = [];
    const seen = new Set();
    model.paths.forEach(function (path, i) {
      let key = i;
      for (const g of path) {
        if (collapsed.has(g)) {
          key = g;
          break;
        }
      }
      owner.push(key);
      if (!seen.has(key)) {
        seen.add(key);
        keys.push(key);
      }
    });
    return { owner: owner, keys: keys };
  }

  // edges[k] = {s, t, label} over node indices -> edges between drawn boxes: an edge inside one
  // collapsed group disappears, parallel edges merge (count; the label kept when they agree).
  function foldEdges(edges, owner) {
    const merged = new Map();
    const out = [];
    for (const e of edges) {
      const s = owner[e.s];
      const t = owner[e.t];
      if (s === t && typeof s === "string") continue;
      const id = typeof s + ":" + s + "\u0000" + typeof t + ":" + t;
      const label = e.label === undefined || e.label === null ? "" : String(e.label);
      const seen = merged.get(id);
      if (seen) {
        seen.count++;
        if (seen.label !== label) seen.label = "";
      } else {
        const edge = { s: s, t: t, label: label, count: 1 };
        merged.set(id, edge);
        out.push(edge);
      }
    }
    return out;
  }

  // The text of a collapsed group's box: its key; the stepped member when it holds it, else what
  // it holds; its largest gradient now (from the members' current labels). Three lines, so a
  // folded model keeps its rows low. labels[i]: node i's current label; names[i]: its name;
  // active: the stepped node or -1.
  function groupLines(model, key, labels, names, active) {
    const group = model.groups.get(key);
    const parts = [group.kind];
    if (group.children.length) parts.push(group.children.length + " neuron" + (group.children.length === 1 ? "" : "s"));
    parts.push(group.members.length + " nodes");
    let peak = null;
    for (const i of group.members) {
      const g = gradOf(labels[i]);
      if (g !== null && (peak === null || Math.abs(g) > Math.abs(peak))) peak = g;
    }
    const holdsActive = active >= 0 && group.members.indexOf(active) >= 0;
    return {
      lines: [
        key,
        holdsActive ? "\u25b6 " + names[active] : parts.join(" \u00b7 "),
        peak === null ? "no gradients" : "peak grad: " + fmtGrad(peak),
      ],
      grad: peak,
    };
  }

  // The number on a "grad: G" line, or null (no such line, or "nan" / "inf").
  function parseGrad(line) {
    const m = /^grad: (\S+)$/.exec(String(line));
    if (!m) return null;
    const x = Number(m[1]);
    return isFinite(x) ? x : null;
  }

  // The gradient on a label's "grad:" line (the last one), or null.
  function gradOf(label) {
    const rows = String(label).split("\n");
    for (let k = rows.length - 1; k >= 0; k--) {
      const g = parseGrad(rows[k]);
      if (g !== null) return g;
    }
    return null;
  }

  // A gradient as the boxes show it: "0", "+0.5", "-1.5", "+0.001235", "-1.235e-4", "+1.235e5".
  function fmtGrad(x) {
    if (!isFinite(x)) return String(x);
    if (x === 0) return "0";
    const a = Math.abs(x);
    let body;
    if (a >= 1e-3 && a < 1e5) {
      body = String(Number(a.toPrecision(4)));
    } else {
      const m = a.toExponential(3).split("e");
      body = String(Number(m[0])) + "e" + Number(m[1]);
    }
    // Rounding can carry 99999.5 up to "100000": say it in exponent form like its neighbours.
    if (body === "100000") body = "1e5";
    return (x < 0 ? "-" : "+") + body;
  }

  // 0 (zero or unknown), then 1..3 as |x| nears the largest |gradient| of the graph.
  function gradLevel(x, maxAbs) {
    if (x === null || !isFinite(x) || x === 0 || !(maxAbs > 0)) return 0;
    const r = Math.abs(x) / maxAbs;
    return r >= 0.3 ? 3 : r >= 0.03 ? 2 : 1;
  }

  // The mark class of a gradient: "fx-gzero" or "fx-gpos fx-g2", "fx-gneg fx-g3", ...
  function gradClass(x, maxAbs) {
    const level = gradLevel(x, maxAbs);
    if (!level) return "fx-gzero";
    return (x > 0 ? "fx-gpos" : "fx-gneg") + " fx-g" + level;
  }

  // A label's lines with every "grad: G" line shown as fmtGrad(G); grad is the last one's value.
  function showGrads(label) {
    let grad = null;
    const lines = String(label).split("\n").map(function (line) {
      const g = parseGrad(line);
      if (g === null) return line;
      grad = g;
      return "grad: " + fmtGrad(g);
    });
    return { lines: lines, grad: grad };
  }

  return {
    COLLAPSE_OVER: COLLAPSE_OVER,
    groupPath: groupPath,
    buildGroups: buildGroups,
    defaultCollapsed: defaultCollapsed,
    collapseLevel: collapseLevel,
    fold: fold,
    foldEdges: foldEdges,
    groupLines: groupLines,
    parseGrad: parseGrad,
    gradOf: gradOf,
    fmtGrad: fmtGrad,
    gradLevel: gradLevel,
    gradClass: gradClass,
    showGrads: showGrads,
  };
})();
