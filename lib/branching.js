"use strict";
// The entries of a branched session (`createBranchedSession`), as pi 1.6.0 builds them from
// the path's objects: label entries leave the path, later entries are re-parented onto it,
// and the labels of entries on the path are re-created after its last entry. (For a path
// of loaded, canonical lines the core does the same on the bytes: `branch.rs`.)

const { call } = require("./native.js");
const { generateId, uuidv7 } = require("./ids.js");
const { keyOf } = require("./keys.js");
const { newSessionParts } = require("./header.js");
const { stringifyLines } = require("./persistence.js");
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

/**
 * `createBranchedSession` for a persisted session whose path lines are loaded and canonical:
 * the core rewrites the path's lines (`parentId`, `firstKeptEntryId`) as bytes and writes the
 * new file, so no entry is parsed into JS. Returns the new session (`id`, `file`, the core
 * `next` and its objects `objs`), or undefined to take the object path (entries built in JS,
 * unusual lines, or a branch without a conversation, which stays in memory).
 */
function branchFromLines(native, entries, leafId, dir, cwd, sessionFile) {
  const positions = call(() => native.branch(keyOf(leafId)));
  if (positions.length === 0) return undefined;
  // Only lines nobody has parsed: a JS object may hold what its line does not (values
  // built in JS, or a caller's changes), and the reference copies the objects.
  for (const p of positions) if (entries.isMaterialised(p)) return undefined;
  const rewritten = call(() => native.branchedLines(positions));
  if (rewritten === null) return undefined;
  const [idsJson, conversation] = rewritten;
  if (!conversation) return undefined;
  const pathIds = JSON.parse(idsJson);
  const { id, header, file } = newSessionParts(dir, cwd, sessionFile, uuidv7());
  const labelEntries = labelsOnPath(native, entries, pathIds);
  const next = call(() => native.commitBranched(file, `${JSON.stringify(header)}\n`, stringifyLines(labelEntries)));
  const objs = new Array(1 + pathIds.length + labelEntries.length);
  objs[0] = header;
  for (let i = 0; i < labelEntries.length; i++) objs[1 + pathIds.length + i] = labelEntries[i];
  return { id, file, next, objs };
}

module.exports = { branchFromLines, branchedEntries };
