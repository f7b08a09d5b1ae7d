"use strict";
// `createBranchedSession` in JS, as pi 1.6.0 builds it from the path's objects: label
// entries leave the path, later entries are re-parented onto it, and the labels of entries
// on the path are re-created after its last entry.
//
// Why it stays: the core writes a branched session from the lines it loaded, in one pass
// (`branch.rs`, through `#createBranchedInCore`). It cannot answer when an entry on the
// path is a JS object (built by the facade, handed in by `inMemory(cwd, options, entries)`,
// or parsed and possibly changed by a caller: the reference copies the objects), for a
// session that does not persist, for a path whose branch stays in memory (no conversation)
// or whose entries need JS semantics (ids that are not strings, a message without
// `message`). Those take this path.

const { generateId, uuidv7 } = require("./ids.js");
const { newSessionParts } = require("./header.js");
const { labelMaps } = require("./tree.js");

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

/** The label entries re-creating the labels of the entries in `pathIds` (core `native`). */
function labelsOnPath(native, entries, pathIds) {
  const { labels, stamps } = labelMaps(entries.atMany(native.labels()));
  return labelEntriesFor(pathIds, labels, stamps);
}

/**
 * A branched session from the objects of `path`: its id, file and entries (the new header,
 * the path without labels, the re-created labels).
 */
function branchedEntries(path, native, entries, dir, cwd, parentSession) {
  const pathWithoutLabels = withoutLabels(path);
  const { id, header, file } = newSessionParts(dir, cwd, parentSession, uuidv7());
  const labelEntries = labelsOnPath(
    native,
    entries,
    pathWithoutLabels.map((e) => e.id),
  );
  return { id, file, entries: [header, ...pathWithoutLabels, ...labelEntries] };
}

module.exports = { branchedEntries };
