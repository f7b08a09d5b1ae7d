"use strict";
// pi-session-native: a drop-in, native SessionManager for the pi coding agent.
// Same exports as `@earendil-works/pi-coding-agent`'s `core/session-manager` module (1.6.0).

const { SessionManager } = require("./lib/session-manager.js");
const context = require("./lib/context.js");
const listing = require("./lib/listing.js");
const { binding, call } = require("./lib/native.js");
const { normalizePath } = require("./lib/paths.js");

/** Exported for testing */
function loadEntriesFromFile(filePath) {
  const lines = call(() => binding.loadEntriesAscii(normalizePath(filePath)));
  if (lines === null) return [];
  return lines
    .toString("latin1")
    .split("\n")
    .map((line) => JSON.parse(line));
}

/** Exported for testing */
function findMostRecentSession(sessionDir, cwd) {
  return listing.findMostRecentSession(sessionDir, cwd);
}

exports.CURRENT_SESSION_VERSION = context.CURRENT_SESSION_VERSION;
exports.SessionManager = SessionManager;
exports.assertValidSessionId = context.assertValidSessionId;
exports.buildContextEntries = context.buildContextEntries;
exports.buildSessionContext = context.buildSessionContext;
exports.buildSessionProjection = context.buildSessionProjection;
exports.findMostRecentSession = findMostRecentSession;
exports.getDefaultSessionDir = context.getDefaultSessionDir;
exports.getLatestCompactionEntry = context.getLatestCompactionEntry;
exports.loadEntriesFromFile = loadEntriesFromFile;
exports.migrateSessionEntries = context.migrateSessionEntries;
exports.parseSessionEntries = context.parseSessionEntries;
exports.projectContextEntry = context.projectContextEntry;
exports.sessionEntryToContextMessages = context.sessionEntryToContextMessages;
