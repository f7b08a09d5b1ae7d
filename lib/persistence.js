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

const { NativeSession } = binding;

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
 * The header `open` takes the cwd from. The bounded scan is only a discovery optimisation;
 * past its limit a full load is authoritative, and is handed on (`preloaded`) so the file
 * is read once.
 */
function readOpenHeader(path) {
  const scan = call(() => binding.readHeader(path));
  if (scan.kind !== "limitExceeded") {
    return { header: scan.kind === "header" ? JSON.parse(scan.line) : null, preloaded: undefined };
  }
  const preloaded = call(() => NativeSession.load(normalizePath(path)));
  const first = preloaded.status === "loaded" ? JSON.parse(preloaded.line(0)) : undefined;
  return { header: first?.type === "session" ? first : null, preloaded };
}

/**
 * Writes `forkFrom`'s copy of the loaded `source`: the new header, then every non-header
 * entry as JSON.stringify(JSON.parse(line)). Lines that are already canonical go through as
 * bytes; the rest are re-serialised here. Returns the new file's core session where the core
 * made it from the source's index (else undefined: the file is loaded).
 */
function writeFork(path, header, source) {
  const positions = source.entries();
  const canonical = binding.canonicalLines(source, positions);
  const overridePos = [];
  const overrideText = [];
  for (let i = 0; i < positions.length; i++) {
    if (!canonical[i]) {
      overridePos.push(positions[i]);
      overrideText.push(JSON.stringify(JSON.parse(source.line(positions[i]))));
    }
  }
  const written = call(() =>
    binding.writeSessionFile(
      path,
      `${JSON.stringify(header)}\n`,
      source,
      positions,
      Uint32Array.from(overridePos),
      overrideText,
      true,
    ),
  );
  return written ?? undefined;
}

module.exports = { SYNC_APPENDS, backupBeforeMigration, commitEntry, readOpenHeader, stringifyLines, writeFork };
