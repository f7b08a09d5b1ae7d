"use strict";
// The tree's objects. `getTree` sorts children with V8's sort and the reference's comparator (its
// ties and NaN times decide the order). `branchedEntries` copies objects, as the reference does, for
// what the core's one-pass branch (`branch.rs`) cannot take: a path entry that is a JS object (built,
// handed in, or parsed and maybe changed), a session without a file or a conversation, or an entry
// that needs JS semantics (ids that are not strings, a message entry without `message`).

const { call, generateId, uuidv7 } = require("./native.js");
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

/** The path without its label entries, each entry a copy re-parented onto the one before. */
function withoutLabels(path) {
  const pathWithoutLabels = [];
  const replacementByLabelId = new Map();
  const pendingLabelIds = [];
  let pathParentId = null;
  for (const entry of path) {
    if (entry.type === "label") {
      pendingLabelIds.push(entry.id);
      continue;
    }
    for (const labelId of pendingLabelIds) replacementByLabelId.set(labelId, entry.id);
    pendingLabelIds.length = 0;
    pathWithoutLabels.push(
      entry.type === "compaction"
        ? {
            ...entry,
            parentId: pathParentId,
            firstKeptEntryId:
              entry.firstKeptEntryId === entry.id
                ? entry.id
                : (replacementByLabelId.get(entry.firstKeptEntryId) ?? entry.firstKeptEntryId),
          }
        : { ...entry, parentId: pathParentId },
    );
    pathParentId = entry.id;
  }
  return pathWithoutLabels;
}

/** A branched session from the objects of `path`: header, path without labels, re-created labels. */
function branchedEntries(path, native, entries, dir, cwd, parentSession) {
  const pathWithoutLabels = withoutLabels(path);
  const { id, header, file } = newSessionParts(dir, cwd, parentSession, uuidv7());
  const pathIds = pathWithoutLabels.map((e) => e.id);
  const { labels, stamps } = labelMaps(entries.atMany(native.labels()));
  const onPath = new Set(pathIds);
  const taken = new Set(pathIds);
  let parentId = pathIds[pathIds.length - 1] || null;
  const labelEntries = [];
  for (const [targetId, label] of labels) {
    if (!onPath.has(targetId)) continue;
    const labelId = generateId((id) => taken.has(id));
    labelEntries.push({ type: "label", id: labelId, parentId, timestamp: stamps.get(targetId), targetId, label });
    taken.add(labelId);
    parentId = labelId;
  }
  return { id, file, entries: [header, ...pathWithoutLabels, ...labelEntries] };
}

module.exports = { branchedEntries, buildTree };
