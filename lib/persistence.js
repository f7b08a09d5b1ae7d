"use strict";
// The session file as the class writes it: entries as JSONL, appends through the core's
// protocol (`Session::commit`), the pre-migration backup, `open`'s header read and the
// copy `forkFrom` writes. Only what must be JS is here (`JSON.stringify` of the objects, and
// building an entry again when its id is taken); the core does the writing.

const { randomUUID } = require("node:crypto");
const { binding, call, toJsError } = require("./native.js");
const { factsOf } = require("./keys.js");
const { shortId } = require("./ids.js");
const { normalizePath } = require("./paths.js");

/** Opt-in durability: fsync every append (`PI_SESSION_NATIVE_FSYNC=1`). */
const SYNC_APPENDS = process.env.PI_SESSION_NATIVE_FSYNC === "1";

/** The JSONL text of `entries`, exactly as the reference writes them. */
function stringifyLines(entries) {
  let out = "";
  for (const e of entries) out += `${JSON.stringify(e)}\n`;
  return out;
}

/**
 * Appends the entry `build(id)` returns to a session file on disk (`Session::commit`): the
 * core checks the id is unused (else the entry is built again with another id, as
 * `generateId` would have picked one), writes the entry as one line and indexes what other
 * processes appended before it, so the tree matches the file. Returns the entry, indexed.
 */
function commitEntry(native, entries, sessionFile, build) {
  for (let attempt = 0; ; attempt++) {
    const entry = build(attempt < 100 ? shortId() : randomUUID());
    const json = JSON.stringify(entry);
    const before = entries.length;
    let count;
    try {
      count = native.commitLine(factsOf(entry), json, sessionFile, SYNC_APPENDS);
    } catch (error) {
      entries.padTo(native.count());
      throw toJsError(error);
    }
    // The id is taken (nothing was written): build the entry again with another.
    if (count === before) continue;
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
 * `open`'s read of the file: the session loaded once (`openSession`), with its header for
 * the cwd (`readSessionHeader` finds the same first parsed entry within its bounded scan,
 * and its full-load fallback the same one past it). `preloaded` goes to the constructor, so
 * the file is read once. With `scanOnly` (a session folder still to be made: the reference
 * makes it before it loads, and the load may repair the file) only the header is read, by
 * the bounded scan.
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
 * `forkFrom`'s copy, in one read of the source (`forkSession`): `prepare()` runs between the
 * source's load and the write, as the reference's steps there do, and returns the new file
 * and its header. The new file's entries are the source's parsed non-header entries as
 * `JSON.stringify(JSON.parse(line))`, canonicalised in the core. Returns the new file's
 * core session, or null when the source is missing or not a session.
 */
function writeFork(sourcePath, prepare) {
  return call(() =>
    binding.forkSession(normalizePath(sourcePath), () => {
      const { file, header } = prepare();
      return [file, `${JSON.stringify(header)}\n`];
    }),
  );
}

module.exports = { SYNC_APPENDS, backupBeforeMigration, commitEntry, readOpenHeader, stringifyLines, writeFork };
