"use strict";
// The session file's format (parsing; the v1/v2 migration's assignments on the caller's objects, by
// the core's plan) and what the class's writes need of JS: `JSON.stringify`, `Date`'s ISO text,
// rebuilding an entry whose id is taken. The core reads and writes.

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

/** What the migration reads of an entry (`migrate::Fact`): its kind, and a compaction's index. */
function migrationFacts(entries) {
  const facts = new Float64Array(2 * entries.length);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    let kind = 0;
    let index = -2;
    if (e === null || e === undefined) kind = 4;
    else if (!e) kind = 5;
    else if (e.type === "session") kind = 1;
    else if (e.type === "compaction") {
      kind = 2;
      const x = e.firstKeptEntryIndex;
      // As a property key: only a non-negative integer names an element.
      if (typeof x === "number") index = Number.isInteger(x) && x >= 0 ? x : -1;
    } else if (e.type === "message" && e.message && e.message.role === "hookMessage") kind = 3;
    facts[2 * i] = kind;
    facts[2 * i + 1] = index;
  }
  return facts;
}

/**
 * Brings entries to the current version in place, by the core's plan (`migrate::plan`: which ids
 * and parents, the compactions' kept entries, the renames); true if the reference migrates. New
 * keys land at the end of each object and deleted ones go, as the reference's assignments make them.
 */
function migrateToCurrentVersion(entries) {
  const header = entries.find((e) => e.type === "session");
  const version = Number(header?.version ?? 1);
  if (!binding.migrates(version)) return false;
  const { steps, ids } = binding.migrationPlan(version, migrationFacts(entries));
  for (let s = 0; s < steps.length; s += 4) {
    const entry = entries[steps[s]];
    switch (steps[s + 1]) {
      case 0:
        return entry.type; // the reference's TypeError
      case 1:
        entry.version = 2;
        break;
      case 2:
        entry.version = 3;
        break;
      case 3: {
        const k = steps[s + 3];
        entry.id = ids[k + 1];
        entry.parentId = k < 0 ? null : ids[k];
        const target = steps[s + 2];
        if (target >= 0) entry.firstKeptEntryId = entries[target].id;
        if (target >= -1) delete entry.firstKeptEntryIndex;
        break;
      }
      case 4:
        entry.message.role = "custom";
        break;
    }
  }
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
