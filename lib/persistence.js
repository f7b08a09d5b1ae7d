"use strict";
// The session file's format (parsing, the v1/v2 migration on the caller's objects, as pi does it)
// and what the class's writes need of JS: `JSON.stringify`, `Date`'s ISO text, rebuilding an entry
// whose id is taken. The core reads and writes.

const { join } = require("node:path");
const { binding, call, toJsError } = require("./native.js");
const { factsOf } = require("./keys.js");
const { normalizePath } = require("./paths.js");

const CURRENT_SESSION_VERSION = 3;

/** Opt-in durability: fsync every append (`PI_SESSION_NATIVE_FSYNC=1`). */
const SYNC_APPENDS = process.env.PI_SESSION_NATIVE_FSYNC === "1";

function assertValidSessionId(id) {
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(id)) {
    throw new Error(
      "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character",
    );
  }
}

function parseSessionEntries(content) {
  const entries = [];
  for (const line of content.trim().split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line));
    } catch {
      // Skip malformed lines
    }
  }
  return entries;
}

function migrateV1ToV2(entries) {
  let prevId = null;
  for (const entry of entries) {
    if (entry.type === "session") {
      entry.version = 2;
      continue;
    }
    // `generateId` against the reference's id set, which is never filled: its first try.
    entry.id = binding.shortId();
    entry.parentId = prevId;
    prevId = entry.id;
    if (entry.type === "compaction" && typeof entry.firstKeptEntryIndex === "number") {
      const targetEntry = entries[entry.firstKeptEntryIndex];
      if (targetEntry && targetEntry.type !== "session") entry.firstKeptEntryId = targetEntry.id;
      delete entry.firstKeptEntryIndex;
    }
  }
}

function migrateV2ToV3(entries) {
  for (const entry of entries) {
    if (entry.type === "session") {
      entry.version = 3;
      continue;
    }
    if (entry.type === "message" && entry.message && entry.message.role === "hookMessage")
      entry.message.role = "custom";
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

let lastMs = Number.NaN;
let lastIso = "";

/** `new Date().toISOString()`, formatted once per millisecond (a burst of appends: ~10x cheaper). */
function nowIso() {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

/** The header and file of a new session `id` in `dir`, as `newSession`, `createBranchedSession` and `forkFrom` make them. */
function newSessionParts(dir, cwd, parentSession, id) {
  const timestamp = nowIso();
  const header = { type: "session", version: CURRENT_SESSION_VERSION, id, timestamp, cwd, parentSession };
  return { id, header, file: join(dir, `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`) };
}

/** The JSONL text of `entries`, exactly as the reference writes them. */
function stringifyLines(entries) {
  let out = "";
  for (const e of entries) out += `${JSON.stringify(e)}\n`;
  return out;
}

/**
 * Appends `build(id)` to the file (`Session::commit`). The core refuses a taken id (the entry is
 * built again, as `generateId` would have picked another) and indexes other writers' lines first.
 */
function commitEntry(native, entries, sessionFile, build) {
  for (;;) {
    const id = entries.newId();
    let entry;
    let json;
    let facts;
    try {
      entry = build(id);
      json = JSON.stringify(entry);
      facts = factsOf(entry);
    } catch (error) {
      entries.unusedId();
      throw error;
    }
    const before = entries.length;
    let count;
    try {
      count = native.commitLine(facts, json, sessionFile, SYNC_APPENDS, entries.heldLines);
    } catch (error) {
      entries.padTo(native.count());
      entries.unusedId();
      throw toJsError(error);
    }
    if (count === before) continue; // the id is taken: nothing was written
    entries.pushIndexed(entry, count);
    return entry;
  }
}

/** Keeps the pre-migration file as `<file>.v<version>.bak` (the reference keeps none). */
function backupBeforeMigration(sessionFile, version) {
  const tag = typeof version === "number" && Number.isFinite(version) ? version : "x";
  call(() => binding.backupFile(sessionFile, `${sessionFile}.v${tag}.bak`));
}

/**
 * `open`'s read: the session loaded once, with its header for the cwd. `scanOnly` (the folder is
 * still to be made, before the load that may repair the file): only the bounded header scan.
 */
function readOpenHeader(path, scanOnly) {
  if (scanOnly) {
    const scan = call(() => binding.readHeader(path));
    if (scan.kind !== "limitExceeded") {
      return { header: scan.kind === "header" ? JSON.parse(scan.line) : null, preloaded: undefined };
    }
  }
  const [native, line] = call(() => binding.openSession(normalizePath(path)));
  const header = line === null ? undefined : JSON.parse(line);
  return { header: header?.type === "session" ? header : null, preloaded: { native, header } };
}

/**
 * `forkFrom`'s copy in one read of the source (`store::fork`); `prepare()` runs between the load
 * and the write and returns the new file and header. Null when the source is not a session.
 */
function writeFork(sourcePath, prepare) {
  return call(() =>
    binding.forkSession(normalizePath(sourcePath), () => {
      const { file, header } = prepare();
      return [file, `${JSON.stringify(header)}\n`];
    }),
  );
}

/** The exported `loadEntriesFromFile`: every parsed entry of a session file, or []. */
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

module.exports = {
  CURRENT_SESSION_VERSION,
  SYNC_APPENDS,
  assertValidSessionId,
  backupBeforeMigration,
  commitEntry,
  loadEntriesFromFile,
  migrateSessionEntries,
  migrateToCurrentVersion,
  newSessionParts,
  nowIso,
  parseSessionEntries,
  readOpenHeader,
  stringifyLines,
  writeFork,
};
