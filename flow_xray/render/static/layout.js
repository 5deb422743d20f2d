// layout.js -> FX.layout: our own graph layouts, no third-party code.
// tree: a tidy tree (leaves in slots left to right, each parent centred
//   over its children) -- linear time, used for trace call trees.
// dag: a Sugiyama-style layered layout (cycle breaking, longest-path
//   layering with each source moved up to just before its first user, dummy
//   nodes on long edges, barycentre crossing reduction, neighbour-averaged
//   coordinates) -- used for autodiff and DOT graphs.
// Both return box centres; edges are point lists from source to target.
// Public: tree(items, opt), extent(pos, w, h), dag(sizes, edges, rankdir). Pure: no DOM.

FX.layout = (function () {
  // items[i].parent is the index of i's parent (always < i; -1 for a root), in pre-order.
  // opt: {w, h, gapX, gapY, horizontal}; horizontal puts depth along x (parents left of children).
  function tree(items, opt) {
    const n = items.length;
    const slot = new Float64Array(n);
    const depth = new Int32Array(n);
    const first = new Int32Array(n).fill(-1);
    const last = new Int32Array(n).fill(-1);
    for (let i = 0; i < n; i++) {
      const p = items[i].parent;
      if (p < 0) continue;
      depth[i] = depth[p] + 1;
      if (first[p] < 0) first[p] = i;
      last[p] = i;
    }
    const breadth = opt.horizontal ? opt.h + 12 : opt.w + opt.gapX;
    const rank = opt.horizontal ? opt.w + opt.gapX * 3 : opt.h + opt.gapY;
    let cursor = 0;
    for (let i = 0; i < n; i++) {
      if (items[i].parent < 0 && i > 0) cursor += breadth / 4; // extra room between root trees
      if (first[i] < 0) {
        slot[i] = cursor;
        cursor += breadth;
      }
    }
    for (let i = n - 1; i >= 0; i--) {
      if (first[i] >= 0) slot[i] = (slot[first[i]] + slot[last[i]]) / 2;
    }
    const pos = [];
    for (let i = 0; i < n; i++) {
      const along = depth[i] * rank;
      pos.push(opt.horizontal
        ? { x: along + opt.w / 2, y: slot[i] + opt.h / 2 }
        : { x: slot[i] + opt.w / 2, y: along + opt.h / 2 });
    }
    return pos;
  }

  // Width and height of the drawing of a tree layout.
  function extent(pos, w, h) {
    let x = 0;
    let y = 0;
    for (const p of pos) {
      x = Math.max(x, p.x + w / 2);
      y = Math.max(y, p.y + h / 2);
    }
    return { w: x, h: y };
  }

  // sizes[i] = {w, h}; edges[k] = {s, t} (node indices). Returns {pos, routes}.
  function dag(sizes, edges, rankdir) {
    const n = sizes.length;
    const flipped = breakCycles(n, edges);
    const layer = longestPathLayers(n, edges, flipped);
    const proper = addDummies(n, edges, flipped, layer);
    const layers = orderLayers(proper);
    const across = rankdir === "LR" ? "h" : "w";
    const along = rankdir === "LR" ? "w" : "h";
    const size = function (v) {
      return v < n ? sizes[v] : { w: 0, h: 0 };
    };
    const breadth = assignBreadth(proper, layers, function (v) {
      return v < n ? size(v)[across] : 8;
    });
    // Rank coordinate: each layer as deep as its largest box, plus a gap for edge labels.
    const rankPos = [];
    let offset = 0;
    for (let l = 0; l < layers.length; l++) {
      let depthOfLayer = 0;
      for (const v of layers[l]) depthOfLayer = Math.max(depthOfLayer, size(v)[along]);
      rankPos.push(offset + depthOfLayer / 2);
      offset += depthOfLayer + (rankdir === "LR" ? 70 : 56);
    }
    const total = offset;
    const point = function (v) {
      let r = rankPos[proper.layer[v]];
      if (rankdir === "BT") r = total - r;
      return rankdir === "LR" ? { x: r, y: breadth[v] } : { x: breadth[v], y: r };
    };
    const pos = [];
    for (let v = 0; v < n; v++) pos.push(point(v));
    const routes = proper.chains.map(function (chain) {
      return chain.map(point);
    });
    return { pos: pos, routes: routes };
  }

  // Iterative DFS; an edge that closes a cycle (or a self loop) is flipped for layering.
  function breakCycles(n, edges) {
    const out = [];
    for (let v = 0; v < n; v++) out.push([]);
    edges.forEach(function (e, k) {
      out[e.s].push(k);
    });
    const state = new Uint8Array(n);
    const flipped = new Uint8Array(edges.length);
    for (let root = 0; root < n; root++) {
      if (state[root]) continue;
      const stack = [[root, 0]];
      state[root] = 1;
      while (stack.length) {
        const top = stack[stack.length - 1];
        const v = top[0];
        if (top[1] < out[v].length) {
          const k = out[v][top[1]++];
          const t = edges[k].t;
          if (state[t] === 1) flipped[k] = 1;
          else if (state[t] === 0) {
            state[t] = 1;
            stack.push([t, 0]);
          }
        } else {
          state[v] = 2;
          stack.pop();
        }
      }
    }
    return flipped;
  }

  function longestPathLayers(n, edges, flipped) {
    const out = [];
    for (let v = 0; v < n; v++) out.push([]);
    const indeg = new Int32Array(n);
    edges.forEach(function (e, k) {
      if (e.s === e.t) return;
      const a = flipped[k] ? e.t : e.s;
      const b = flipped[k] ? e.s : e.t;
      out[a].push(b);
      indeg[b]++;
    });
    const layer = new Int32Array(n);
    const queue = [];
    for (let v = 0; v < n; v++) if (indeg[v] === 0) queue.push(v);
    const sources = queue.slice();
    for (let head = 0; head < queue.length; head++) {
      const v = queue[head];
      for (const w of out[v]) {
        layer[w] = Math.max(layer[w], layer[v] + 1);
        if (--indeg[w] === 0) queue.push(w);
      }
    }
    // A source sits one layer before its first user, not in layer 0: a model's weights next to
    // the products that read them, instead of long edges across the whole drawing.
    for (const v of sources) {
      if (!out[v].length) continue;
      let first = Infinity;
      for (const w of out[v]) first = Math.min(first, layer[w]);
      layer[v] = first - 1;
    }
    return layer;
  }

  // Split every edge spanning k > 1 layers into k unit edges through dummy nodes.
  function addDummies(n, edges, flipped, layerOf) {
    const layer = Array.from(layerOf);
    const preds = [];
    const succs = [];
    for (let v = 0; v < n; v++) {
      preds.push([]);
      succs.push([]);
    }
    const chains = [];
    edges.forEach(function (e, k) {
      const a = flipped[k] ? e.t : e.s;
      const b = flipped[k] ? e.s : e.t;
      const chain = [a];
      let prev = a;
      for (let l = layer[a] + 1; l < layer[b]; l++) {
        const d = layer.length;
        layer.push(l);
        preds.push([prev]);
        succs.push([]);
        succs[prev].push(d);
        chain.push(d);
        prev = d;
      }
      if (a !== b) {
        succs[prev].push(b);
        preds[b].push(prev);
      }
      chain.push(b);
      chains.push(flipped[k] ? chain.reverse() : chain);
    });
    return { layer: layer, preds: preds, succs: succs, chains: chains, count: layer.length };
  }

  // Barycentre heuristic, alternating downward and upward sweeps; keeps the best order seen.
  function orderLayers(proper) {
    let depth = 0;
    for (const l of proper.layer) depth = Math.max(depth, l + 1);
    const layers = [];
    for (let l = 0; l < depth; l++) layers.push([]);
    for (let v = 0; v < proper.count; v++) layers[proper.layer[v]].push(v);
    const pos = new Float64Array(proper.count);
    const index = function () {
      for (const row of layers) row.forEach(function (v, i) { pos[v] = i; });
    };
    index();
    const countCrossings = proper.count <= 3000;
    let best = layers.map(function (row) { return row.slice(); });
    let bestCrossings = countCrossings ? crossings(layers, proper.succs, pos) : 0;
    for (let iter = 0; iter < 8; iter++) {
      const down = iter % 2 === 0;
      const range = down ? layers.map((_, l) => l).slice(1) : layers.map((_, l) => l).reverse().slice(1);
      for (const l of range) {
        const row = layers[l];
        const bary = new Map();
        for (const v of row) {
          const nbrs = down ? proper.preds[v] : proper.succs[v];
          let sum = 0;
          for (const w of nbrs) sum += pos[w];
          bary.set(v, nbrs.length ? sum / nbrs.length : pos[v]);
        }
        row.sort(function (a, b) { return bary.get(a) - bary.get(b) || pos[a] - pos[b]; });
        row.forEach(function (v, i) { pos[v] = i; });
      }
      if (!countCrossings) continue;
      const c = crossings(layers, proper.succs, pos);
      if (c < bestCrossings) {
        bestCrossings = c;
        best = layers.map(function (row) { return row.slice(); });
      }
    }
    return countCrossings ? best : layers;
  }

  function crossings(layers, succs, pos) {
    let total = 0;
    for (let l = 0; l + 1 < layers.length; l++) {
      const segs = [];
      for (const v of layers[l]) for (const w of succs[v]) segs.push([pos[v], pos[w]]);
      for (let i = 0; i < segs.length; i++) {
        for (let j = i + 1; j < segs.length; j++) {
          const a = segs[i];
          const b = segs[j];
          if ((a[0] - b[0]) * (a[1] - b[1]) < 0) total++;
        }
      }
    }
    return total;
  }

  // Place each layer's boxes without overlap, pulled towards their neighbours' centres.
  function assignBreadth(proper, layers, width) {
    const gap = 28;
    const x = new Float64Array(proper.count);
    for (const row of layers) {
      let cursor = 0;
      for (const v of row) {
        x[v] = cursor + width(v) / 2;
        cursor += width(v) + gap;
      }
    }
    for (let iter = 0; iter < 6; iter++) {
      const down = iter % 2 === 0;
      const order = down ? layers : layers.slice().reverse();
      for (const row of order) {
        const want = row.map(function (v) {
          const nbrs = down ? proper.preds[v] : proper.succs[v];
          if (!nbrs.length) return x[v];
          let sum = 0;
          for (const w of nbrs) sum += x[w];
          return sum / nbrs.length;
        });
        const sep = function (i) { return (width(row[i - 1]) + width(row[i])) / 2 + gap; };
        const a = want.slice();
        for (let i = 1; i < row.length; i++) a[i] = Math.max(a[i], a[i - 1] + sep(i));
        const b = want.slice();
        for (let i = row.length - 2; i >= 0; i--) b[i] = Math.min(b[i], b[i + 1] - sep(i + 1));
        // Both a and b respect every separation, so their average does too.
        row.forEach(function (v, i) { x[v] = (a[i] + b[i]) / 2; });
      }
    }
    let min = Infinity;
    for (let v = 0; v < proper.count; v++) min = Math.min(min, x[v] - width(v) / 2);
    for (let v = 0; v < proper.count; v++) x[v] -= min;
    return x;
  }

  return { tree: tree, extent: extent, dag: dag };
})();
