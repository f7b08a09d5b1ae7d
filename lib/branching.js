"use strict";
// The entries of a branched session (`createBranchedSession`), as pi 1.6.0 builds them from
// the path's objects: label entries leave the path, later entries are re-parented onto it,
// and the labels of entries on the path are re-created after its last entry. (For a path
// of loaded, canonical lines the core does the same on the bytes: `branch.rs`.)

const { generateId } = require("./ids.js");

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

/** Label entries re-creating `labels` (target id -> label) of the entries in `pathIds`. */
function labelEntriesFor(pathIds, labels, stamps) {
  const pathEntryIds = new Set(pathIds);
  const taken = new Set(pathIds);
  let parentId = pathIds[pathIds.length - 1] || null;
  const labelEntries = [];
  for (const [targetId, label] of labels) {
    if (!pathEntryIds.has(targetId)) continue;
    const labelEntry = {
      type: "label",
      id: generateId((id) => taken.has(id)),
      parentId,
      timestamp: stamps.get(targetId),
      targetId,
      label,
    };
    taken.add(labelEntry.id);
    labelEntries.push(labelEntry);
    parentId = labelEntry.id;
  }
  return labelEntries;
}

module.exports = { labelEntriesFor, withoutLabels };
