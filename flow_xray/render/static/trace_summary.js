// trace_summary.js -> FX.traceSummary: what the trace graph draws when the tree has too many
// calls to read as boxes (past SUMMARY_OVER): the selection's neighbourhood, summarized. Pure
// (no DOM; tested under Node).
//
// Drawn: the path from the root to the selected call, the selection's siblings and children
// (MAX_KIDS boxes each) and, on each level above, the path's call and one box for the calls
// beside it (MAX_CONTEXT), so the picture stays a few boxes tall at any size. Then:
// - repeated siblings are grouped: GROUP_MIN or more children of one call with the same name
//   are one box ("fetch x40"), the one on the path kept out of its group;
// - a level with more boxes than it has room for shows the first of them (and the path's call)
//   and one "+N more" box;
// - a path deeper than MAX_PATH calls folds its middle into one "N levels" box;
// - a drawn call off the path carries the count of calls folded under it (`hidden`).
// Clicking a group selects one of its calls (the first that failed, else the first): the
// graph then shows that call with its group beside it.
//
// Public: SUMMARY_OVER, summarize(tree, selected) -> boxes in pre-order, each
//   {type: "call" | "group" | "more" | "levels", parent: index of its parent box or -1,
//    row: the row it selects, rows: the rows it stands for, hidden: calls folded under it}.
//   tree: {count, parent, size (Int32Arrays, rows in pre-order), name(i), failed(i), allowed(i)}.

FX.traceSummary = (function () {
  const SUMMARY_OVER = 30;
  const GROUP_MIN = 3;
  const MAX_KIDS = 4; // boxes beside and under the selection
  const MAX_CONTEXT = 2; // boxes per level above it: the path's call and one for the others
  const MAX_PATH = 6;

  function childrenOf(tree, i) {
    const out = [];
    if (i < 0) {
      for (let c = 0; c < tree.count; c += tree.size[c]) if (tree.allowed(c)) out.push(c);
      return out;
    }
    for (let c = i + 1; c < i + tree.size[i]; c += tree.size[c]) if (tree.allowed(c)) out.push(c);
    return out;
  }

  // The boxes for the children of one drawn call: groups of same-named siblings, the path's
  // child on its own, at most MAX_KIDS boxes (then one "more" box).
  function childBoxes(tree, kids, onPath, max) {
    const byName = new Map();
    for (const c of kids) {
      const name = String(tree.name(c));
      if (!byName.has(name)) byName.set(name, []);
      byName.get(name).push(c);
    }
    const boxes = [];
    const placed = new Set();
    for (const c of kids) {
      if (placed.has(c)) continue;
      const same = byName.get(String(tree.name(c))).filter(function (k) { return k !== onPath; });
      if (c !== onPath && same.length >= GROUP_MIN) {
        for (const k of same) placed.add(k);
        const failed = same.filter(function (k) { return tree.failed(k); });
        boxes.push({ type: "group", row: failed.length ? failed[0] : same[0], rows: same });
        continue;
      }
      placed.add(c);
      boxes.push({ type: "call", row: c, rows: [c] });
    }
    if (boxes.length <= max) return boxes;
    const keep = boxes.slice(0, max - 1);
    const pathBox = boxes.findIndex(function (b) { return b.row === onPath; });
    if (pathBox >= max - 1) keep[max - 2] = boxes[pathBox];
    const rest = [];
    for (const b of boxes) if (keep.indexOf(b) < 0) rest.push.apply(rest, b.rows);
    keep.push({ type: "more", row: rest[0], rows: rest });
    return keep;
  }

  function summarize(tree, selected) {
    if (!tree.count) return [];
    let focus = selected >= 0 && selected < tree.count && tree.allowed(selected) ? selected : -1;
    if (focus < 0) focus = childrenOf(tree, -1)[0];
    if (focus === undefined) return [];
    const path = [];
    for (let p = focus; p >= 0; p = tree.parent[p]) path.unshift(p);
    // The path's calls drawn with their children; a long path keeps its root and its last
    // MAX_PATH - 2 calls, the levels between folded.
    const folded = path.length > MAX_PATH ? path.slice(1, path.length - (MAX_PATH - 2)) : [];
    const out = [];
    const emit = function (box, parent) {
      box.parent = parent;
      box.hidden = 0;
      out.push(box);
      return out.length - 1;
    };
    // Walk down the path: at each step the call's child boxes, the path's child expanded next.
    // How many boxes the children of the path's call at `depth` get: few above the selection.
    const room = function (depth) { return depth + 2 >= path.length ? MAX_KIDS : MAX_CONTEXT; };
    const rootBoxes = childBoxes(tree, childrenOf(tree, -1), path[0], path.length > 1 ? MAX_CONTEXT : MAX_KIDS);
    let pending = rootBoxes.map(function (b) { return { box: b, parent: -1 }; });
    for (let depth = 0; depth <= path.length; depth++) {
      let next = [];
      for (const item of pending) {
        const slot = emit(item.box, item.parent);
        const row = item.box.row;
        if (item.box.type !== "call") continue;
        const onPath = depth < path.length && row === path[depth];
        if (!onPath) {
          item.box.hidden = tree.size[row] - 1;
          continue;
        }
        if (folded.length && depth === 0) {
          const levels = { type: "levels", row: folded[0], rows: folded.slice(), parent: slot, hidden: 0 };
          out.push(levels);
          const below = path[folded.length + 1];
          next.push({ box: { type: "call", row: below, rows: [below] }, parent: out.length - 1 });
          depth += folded.length;
          continue;
        }
        const kids = depth + 1 < path.length ? path[depth + 1] : -1;
        for (const b of childBoxes(tree, childrenOf(tree, row), kids, room(depth))) next.push({ box: b, parent: slot });
      }
      pending = next;
      if (!pending.length) break;
    }
    return preorder(out);
  }

  // Boxes emitted level by level, reordered so every box follows its parent's subtree order
  // (what the tree layout expects), parents renumbered.
  function preorder(boxes) {
    const kids = boxes.map(function () { return []; });
    const roots = [];
    boxes.forEach(function (b, k) { if (b.parent >= 0) kids[b.parent].push(k); else roots.push(k); });
    const order = [];
    const stack = roots.slice().reverse();
    while (stack.length) {
      const k = stack.pop();
      order.push(k);
      for (let j = kids[k].length - 1; j >= 0; j--) stack.push(kids[k][j]);
    }
    const slot = new Map();
    return order.map(function (k, n) {
      slot.set(k, n);
      const b = boxes[k];
      return { type: b.type, row: b.row, rows: b.rows, hidden: b.hidden, parent: b.parent >= 0 ? slot.get(b.parent) : -1 };
    });
  }

  return { SUMMARY_OVER: SUMMARY_OVER, summarize: summarize };
})();
