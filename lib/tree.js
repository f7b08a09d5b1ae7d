"use strict";
// The tree's objects. `getTree` sorts children with V8's sort and the reference's comparator (its
// ties and NaN times decide the order). `branchedEntries` copies objects by the core's plan
// (`branch::plan`), as the reference spreads them, where the core's one-pass branch (`branch.rs`)
// cannot write the bytes: a path entry that is a JS object (built, handed in, or parsed and maybe
// changed), a session without a file or a conversation, or an entry that needs JS semantics (ids
// that are not strings, a message entry without `message`, values JSON cannot hold).

const { call, uuidv7 } = require("./native.js");
const { newSessionParts } = require("./persistence.js");

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
  // By position; `treeLinks` applied nodeMap's rules (the last entry with an id owns its node).
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
  // Infinity: a time only JS computes (it throws where the reference's comparator throws).
  const time = (p) => {
    let t = times[p];
    if (t === Number.POSITIVE_INFINITY) times[p] = t = new Date(nodes[p].entry.timestamp).getTime();
    return t;
  };
  // The reference's iterative sort, on positions: same comparisons in the same order.
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

/**
 * A branched session of objects, by the core's plan (`branch::plan`: which entries stay, what a
 * compaction's `firstKeptEntryId` names, which labels come back with what ids): copies of the kept
 * objects re-parented onto the one before, as the reference spreads them, then the labels.
 */
function branchedEntries(plan, entries, dir, cwd, parentSession) {
  const kept = entries.atMany(plan.kept);
  const copies = new Array(kept.length);
  let parentId = null;
  for (let i = 0; i < kept.length; i++) {
    const entry = kept[i];
    const at = plan.firstKept[i];
    copies[i] =
      entry.type === "compaction"
        ? { ...entry, parentId, firstKeptEntryId: at < 0 ? entry.firstKeptEntryId : kept[at].id }
        : { ...entry, parentId };
    parentId = entry.id;
  }
  const { id, header, file } = newSessionParts(dir, cwd, parentSession, uuidv7());
  parentId = kept.length > 0 ? kept[kept.length - 1].id || null : null;
  const labelEntries = [];
  const labels = entries.atMany(plan.labels);
  for (let i = 0; i < labels.length; i++) {
    const { timestamp, targetId, label } = labels[i];
    const labelId = plan.labelIds[i];
    // `targetId` is `labelsById`'s key: equal to a kept id, which is truthy (never -0).
    labelEntries.push({ type: "label", id: labelId, parentId, timestamp, targetId, label });
    parentId = labelId;
  }
  return { id, file, entries: [header, ...copies, ...labelEntries] };
}

module.exports = { branchedEntries, buildTree };
