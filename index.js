"use strict";
// pi-session-native: a drop-in, native SessionManager for the pi coding agent.
// Same exports as `@earendil-works/pi-coding-agent`'s `core/session-manager` module of the pi release in
// force (lib/profile.js; 1.6.0 by default): ours (`ours()` in lib/load.js) on the native binding; where no binding
// loads, pi's own, with one warning (lib/load.js). Either way a name is exported only where `impl` has it
// (`projectContextEntry`: from pi 1.5.0 on).

const impl = require("./lib/load.js").load();

// Written out, one assignment per name, so that Node's cjs-module-lexer finds each name (an ES
// `import { SessionManager } from` this file). The list is pi's module's (lib/load.js builds ours);
// __test__/context/free-functions.test.mjs checks this file and index.mjs against pi's own keys.

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
if (Object.hasOwn(impl, "projectContextEntry")) exports.projectContextEntry = impl.projectContextEntry;
exports.sessionEntryToContextMessages = impl.sessionEntryToContextMessages;
