"use strict";
// Migration of older session formats (v1: no ids; v2: `hookMessage` roles) to the current
// one, on the entry objects in place, as pi 1.6.0 does it. It runs in JS because
// `migrateSessionEntries` is an exported function on caller-owned objects; the class uses the
// same code on the entries it loaded.

const { generateId } = require("./ids.js");

const CURRENT_SESSION_VERSION = 3;

function migrateV1ToV2(entries) {
  const ids = new Set();
  let prevId = null;
  for (const entry of entries) {
    if (entry.type === "session") {
      entry.version = 2;
      continue;
    }
    // The reference's id set is never filled, so only the check's shape is kept.
    entry.id = generateId((id) => ids.has(id));
    entry.parentId = prevId;
    prevId = entry.id;
    if (entry.type === "compaction") {
      const comp = entry;
      if (typeof comp.firstKeptEntryIndex === "number") {
        const targetEntry = entries[comp.firstKeptEntryIndex];
        if (targetEntry && targetEntry.type !== "session") comp.firstKeptEntryId = targetEntry.id;
        delete comp.firstKeptEntryIndex;
      }
    }
  }
}

function migrateV2ToV3(entries) {
  for (const entry of entries) {
    if (entry.type === "session") {
      entry.version = 3;
      continue;
    }
    if (entry.type === "message") {
      const msgEntry = entry;
      if (msgEntry.message && msgEntry.message.role === "hookMessage") msgEntry.message.role = "custom";
    }
  }
}

/** Brings entries to the current version in place; true if anything was migrated. */
function migrateToCurrentVersion(entries) {
  const header = entries.find((e) => e.type === "session");
  const version = header?.version ?? 1;
  if (version >= CURRENT_SESSION_VERSION) return false;
  if (version < 2) migrateV1ToV2(entries);
  if (version < 3) migrateV2ToV3(entries);
  return true;
}

function migrateSessionEntries(entries) {
  migrateToCurrentVersion(entries);
}

module.exports = { CURRENT_SESSION_VERSION, migrateSessionEntries, migrateToCurrentVersion };
