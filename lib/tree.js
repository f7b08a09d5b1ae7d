"use strict";
// `getTree`'s nodes, built from the core's links (`tree_links`), and the label maps the
// tree and a branched session share. The child sort runs here, not in the core: it must be
// V8's `Array.prototype.sort` with the reference's comparator, whose ties and NaN times
// decide the order.

const { call } = require("./native.js");
const { timeOf } = require("./keys.js");

/** Target id -> label and target id -> label timestamp, from the label entries in order. */
function labelMaps(labelEntries) {
  const labels = new Map();
  const stamps = new Map();
  for (const e of labelEntries) {
    labels.set(e.targetId, e.label);
    stamps.set(e.targetId, e.timestamp);
  }
  return { labels, stamps };
}

/** The reference's `getTree` over the core `native` and the entry objects `entries`. */
function buildTree(native, entries) {
  const positions = native.entries();
  const objs = entries.atMany(positions);
  const { labels, stamps } = labelMaps(entries.atMany(native.labels()));
  const links = call(() => native.treeLinks());
  const times = native.times();
  // Nodes and child lists by position; `treeLinks` already applied the reference's
  // nodeMap rules (the last entry with an id owns its node; orphans become roots).
  const nodes = new Array(entries.length);
  const kids = new Array(entries.length);
  for (let i = 0; i < objs.length; i++) {
    const entry = objs[i];
    nodes[positions[i]] = { entry, children: [], label: labels.get(entry.id), labelTimestamp: stamps.get(entry.id) };
  }
  const roots = [];
  for (let i = 0; i < objs.length; i++) {
    const node = links[2 * i];
    const parent = links[2 * i + 1];
    if (parent < 0) roots.push(node);
    else (kids[parent] ??= []).push(node);
  }
  const time = (p) => {
    let t = times[p];
    if (t === Number.POSITIVE_INFINITY) times[p] = t = timeOf(nodes[p].entry.timestamp);
    return t;
  };
  // The reference's iterative sort, on positions: same comparisons in the same order,
  // so ties and NaN times come out identically.
  const stack = [...roots];
  while (stack.length > 0) {
    const children = kids[stack.pop()];
    if (children === undefined) continue;
    children.sort((a, b) => time(a) - time(b));
    stack.push(...children);
  }
  for (let p = 0; p < kids.length; p++) {
    const children = kids[p];
    if (children === undefined) continue;
    const out = nodes[p].children;
    for (const q of children) out.push(nodes[q]);
  }
  return roots.map((p) => nodes[p]);
}

module.exports = { buildTree, labelMaps };
