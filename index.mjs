// ESM entry: the same bindings as the CommonJS entry.
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
  projectContextEntry,
  sessionEntryToContextMessages,
} = cjs;
export default cjs;
