"use strict";
// The package's exports on the native binding: the same names as `@earendil-works/pi-coding-agent`'s
// `core/session-manager` module of the pi release in force (lib/profile.js: `projectContextEntry` is
// one from 1.5.0 on). index.js exports these, or pi's own where no binding loads (load.js).

const { SessionManager } = require("./session-manager.js");
const context = require("./free-functions.js");
const listing = require("./listing.js");
const { binding, call } = require("./native.js");
const { normalizePath } = require("./paths.js");
const profile = require("./profile.js");

/** Exported for testing */
function loadEntriesFromFile(filePath) {
  const lines = call(() => binding.loadEntriesAscii(normalizePath(filePath)));
  if (lines === null) return [];
  let text;
  try {
    text = lines.toString("latin1");
  } catch (err) {
    // Past V8's longest string: the reference's readFileSync throws this RangeError.
    if (err?.code === "ERR_STRING_TOO_LONG") throw new RangeError("Invalid string length");
    throw err;
  }
  return text.split("\n").map((line) => JSON.parse(line));
}

/** Exported for testing */
function findMostRecentSession(sessionDir, cwd) {
  return listing.findMostRecentSession(sessionDir, cwd);
}

module.exports = {
  CURRENT_SESSION_VERSION: context.CURRENT_SESSION_VERSION,
  SessionManager,
  assertValidSessionId: context.assertValidSessionId,
  buildContextEntries: context.buildContextEntries,
  buildSessionContext: context.buildSessionContext,
  buildSessionProjection: context.buildSessionProjection,
  findMostRecentSession,
  getDefaultSessionDir: context.getDefaultSessionDir,
  getLatestCompactionEntry: context.getLatestCompactionEntry,
  loadEntriesFromFile,
  migrateSessionEntries: context.migrateSessionEntries,
  parseSessionEntries: context.parseSessionEntries,
  projectContextEntry: context.projectContextEntry,
  sessionEntryToContextMessages: context.sessionEntryToContextMessages,
};
// The export list is decided once, here, by the profile in force when the module loads.
if (!profile.has("exportsProjectContextEntry")) delete module.exports.projectContextEntry;
