// ESM entry: the same bindings as the CommonJS entry (an ES module's export list is written out;
// free-functions.test.mjs checks it against pi's own).
import cjs from "./index.js";

export const {
  CURRENT_SESSION_VERSION,
  SessionManager,
  assertValidSessionId,
  buildContextEntries,
  buildSessionContext,
  buildSessionProjection,
  findMostRecentSession,
  getDefaultSessionDir,
  getLatestCompactionEntry,
  loadEntriesFromFile,
  migrateSessionEntries,
  parseSessionEntries,
  // Always a name here (an ES module's export list is static); undefined where index.js lacks it (pi < 1.5.0).
  projectContextEntry,
  sessionEntryToContextMessages,
} = cjs;
export default cjs;
