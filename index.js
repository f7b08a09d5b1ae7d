"use strict";
// pi-session-native: a drop-in, native SessionManager for the pi coding agent.
// Same exports as `@earendil-works/pi-coding-agent`'s `core/session-manager` module (1.6.0): ours
// (lib/facade.js) on the native binding; where no binding loads, pi's own, with one warning (lib/load.js).

const impl = require("./lib/load.js").load();

exports.CURRENT_SESSION_VERSION = impl.CURRENT_SESSION_VERSION;
exports.SessionManager = impl.SessionManager;
exports.assertValidSessionId = impl.assertValidSessionId;
exports.buildContextEntries = impl.buildContextEntries;
exports.buildSessionContext = impl.buildSessionContext;
exports.buildSessionProjection = impl.buildSessionProjection;
exports.findMostRecentSession = impl.findMostRecentSession;
exports.getDefaultSessionDir = impl.getDefaultSessionDir;
exports.getLatestCompactionEntry = impl.getLatestCompactionEntry;
exports.loadEntriesFromFile = impl.loadEntriesFromFile;
exports.migrateSessionEntries = impl.migrateSessionEntries;
exports.parseSessionEntries = impl.parseSessionEntries;
exports.projectContextEntry = impl.projectContextEntry;
exports.sessionEntryToContextMessages = impl.sessionEntryToContextMessages;
