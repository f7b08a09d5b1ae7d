"use strict";
// Session discovery and listing. The core scans files in parallel off the main thread;
// this file orders them (`localeCompare` order, see collate.js; mtime) and shapes
// `SessionInfo` objects and progress calls exactly as pi 1.6.0 does.

const { existsSync, readdirSync, statSync } = require("node:fs");
const { readdir } = require("node:fs/promises");
const { basename, join, sep } = require("node:path");
const { binding, call } = require("./native.js");
const { keyOf } = require("./keys.js");
const { asciiOrderKnown, compare } = require("./collate.js");
const { NODE, readlineSplitsAsNode, statMtimes } = require("./runtime.js");
const { getDefaultSessionDirPath, getSessionsDir, normalizePath, resolvePath, samePath } = require("./paths.js");
const { getDefaultSessionDir } = require("./free-functions.js");
const { buildSessionInfoSlow, infoFromRow } = require("./session-info.js");

const MAX_CONCURRENT_SESSION_DISCOVERY_LOADS = 64;
const CURRENT_SESSION_LIST_PUBLISH_INTERVAL = 10;
const ALL_SESSION_LIST_PUBLISH_INTERVAL = 100;
/**
 * pi-native's one deviation (set by pi/launcher.js, never by the library): "time" publishes a
 * partial list for the first file, then at most one every PARTIAL_LIST_MS, and for the last.
 * pi's /resume picker rebuilds its whole session tree (a realpathSync per session) on every
 * partial list, so 1.6.0's one per 10 files makes that work grow as n²/10.
 */
const PARTIAL_LISTS = Symbol.for("pi-session-native.partialLists");
const PARTIAL_LIST_MS = 100;

/** Decides, per loaded file, whether its progress call carries a partial list. */
function partialListCadence(everyFiles) {
  if (globalThis[PARTIAL_LISTS] !== "time") {
    return (loaded, total, first) => first || loaded % everyFiles === 0 || loaded === total;
  }
  let last = Number.NEGATIVE_INFINITY;
  return (loaded, total, first) => {
    const now = performance.now();
    if (!(first || loaded === total || now - last >= PARTIAL_LIST_MS)) return false;
    last = now;
    return true;
  };
}
/** Files per native scan batch at least: progress is reported between batches (more come at
 * once when they are ready, as rows from the listing index are). */
const SCAN_BATCH = 32;
/** With a progress callback, the longest stretch of callbacks without a turn of the event loop. */
const YIELD_MS = 50;

function getSessionHeaderCwd(header) {
  const cwd = header.cwd;
  return typeof cwd === "string" ? cwd : undefined;
}

function sessionCwdMatches(cwd, resolvedCwd) {
  return cwd !== undefined && cwd !== "" && samePath(resolvePath(cwd), resolvedCwd);
}

/** `readSessionHeaderForDiscovery`: the header object, or null (never throws). */
function readHeaderForDiscovery(path) {
  try {
    const scan = binding.readHeader(path);
    return scan.kind === "header" ? JSON.parse(scan.line) : null;
  } catch {
    return null;
  }
}

const RECENT_FIRST = 8;

/**
 * The session files of `dir`, newest first. On Node the core sorts them (equal mtimes in libuv's
 * readdir order, by bytes); elsewhere the runtime's readdir and stat answer (runtime.js).
 */
function* newestFirst(dir) {
  if (!NODE) {
    const files = readdirSync(dir)
      .filter((file) => file.endsWith(".jsonl"))
      .map((file) => join(dir, file))
      .map((path) => ({ path, mtime: statSync(path).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    for (const { path } of files) yield path;
    return;
  }
  // The newest few paths first: the answer is nearly always among them, and the rest would be
  // 1,000 strings built for nothing.
  const first = binding.filesByMtime(dir, RECENT_FIRST);
  if (first === null) return;
  yield* first;
  if (first.length < RECENT_FIRST) return;
  const all = binding.filesByMtime(dir, null);
  if (all !== null) yield* all.slice(first.length);
}

function findMostRecentSession(sessionDir, cwd) {
  const resolvedSessionDir = normalizePath(sessionDir);
  const resolvedCwd = cwd ? resolvePath(cwd) : undefined;
  try {
    for (const path of newestFirst(resolvedSessionDir)) {
      const header = readHeaderForDiscovery(path);
      if (header && (!resolvedCwd || sessionCwdMatches(getSessionHeaderCwd(header), resolvedCwd))) return path;
    }
  } catch {
    // Discovery is best-effort.
  }
  return null;
}

/**
 * `[path, header]` of each session file of `dir` whose header's id is `id`, in readdir order: on
 * Node the core reads the headers, batch by batch as far as the caller reads (its order is Node's,
 * by bytes); elsewhere in the runtime's readdir order.
 */
function* filesWithId(dir, id) {
  if (!NODE) {
    for (const file of readdirSync(dir)) {
      if (!file.endsWith(".jsonl")) continue;
      const path = join(dir, file);
      const header = readHeaderForDiscovery(path);
      if (header?.id === id) yield [path, header];
    }
    return;
  }
  for (let from = 0; from !== null; ) {
    const batch = binding.headersWithId(dir, keyOf(id), from);
    if (batch === null) return;
    const found = batch.found;
    for (let i = 0; i < found.length; i += 2) yield [found[i], JSON.parse(found[i + 1])];
    from = batch.next ?? null;
  }
}

function findById(cwd, id, sessionDir) {
  const dir = sessionDir ? normalizePath(sessionDir) : getDefaultSessionDir(cwd);
  const filterCwd = sessionDir !== undefined && !samePath(dir, getDefaultSessionDirPath(cwd));
  const resolvedCwd = resolvePath(cwd);
  try {
    for (const [path, header] of filesWithId(dir, id)) {
      if (!filterCwd || sessionCwdMatches(getSessionHeaderCwd(header), resolvedCwd)) return path;
    }
  } catch {
    // Exact session discovery is best-effort, matching list().
  }
  return undefined;
}

function sortSessionInfos(sessions) {
  return sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/**
 * Scans `paths` in native batches, calling `onLoaded(info, index)` in index order.
 * Resolves to the infos (null for non-sessions), in order. `responsive`: the caller
 * passed a progress callback, so the event loop gets a turn every YIELD_MS of
 * callbacks (the reference yields between files as it reads them; rows from the listing
 * index would otherwise all be reported in one stretch, and a TUI would not paint its
 * progress meanwhile).
 */
async function scanInfos(paths, onLoaded, signal, responsive) {
  const results = new Array(paths.length);
  // A runtime whose readline splits lines elsewhere than the core does (Bun: also at U+2028
  // and U+2029) gets the reference's own reading of every file, on that readline.
  if (!NODE && !(await readlineSplitsAsNode())) {
    for (let index = 0; index < paths.length; index++) {
      signal?.throwIfAborted();
      results[index] = await buildSessionInfoSlow(paths[index], signal);
      onLoaded(results[index], index);
    }
    return results;
  }
  const flag = new binding.AbortFlag();
  const onAbort = () => flag.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let complete = false;
  try {
    // The core scans ahead, in order, while the batches before are handed out.
    const scanner = new binding.InfoScanner(paths, flag);
    let since = performance.now();
    for (let start = 0; start < paths.length; ) {
      signal?.throwIfAborted();
      // At least SCAN_BATCH rows, and all after them that are ready (from the index).
      const [rowsText, ...blocks] = await scanner.take(start, start + SCAN_BATCH);
      const rows = JSON.parse(rowsText);
      signal?.throwIfAborted();
      if (rows.length === 0) break;
      for (let i = 0; i < rows.length; i++) {
        // A progress callback may abort: stop at the next file, as the reference does.
        if (i > 0) signal?.throwIfAborted();
        const index = start + i;
        const row = rows[i];
        const info = row === null ? null : infoFromRow(paths[index], row, blocks);
        results[index] = info;
        onLoaded(info, index);
        if (responsive && performance.now() - since >= YIELD_MS) {
          await binding.yieldToLoop();
          since = performance.now();
        }
      }
      start += rows.length;
    }
    // The listing is complete: the index is written in the background (not awaited; Node
    // stays up until it is done). It never fails the listing.
    complete = true;
    scanner.finish().catch(() => {});
  } finally {
    signal?.removeEventListener("abort", onAbort);
    // Stops the core's threads if this ended early (they are done otherwise; an aborted
    // scan leaves the index as it was).
    if (!complete) flag.abort();
  }
  return results;
}

/** `names.map((name) => join(dir, name))`: the folder part is the same for every name of
 * it (a file name is one plain path segment), so it is normalised once. */
function joinAll(dir, names) {
  const prefix = join(dir, "a").slice(0, -1);
  if (names.length > 0 && join(dir, names[0]) !== prefix + names[0]) return names.map((name) => join(dir, name));
  return names.map((name) => prefix + name);
}

async function listSessionsFromDir(dir, onProgress, signal) {
  signal?.throwIfAborted();
  if (!existsSync(dir)) return [];
  // The index is read (decompressed) on another thread while this one lists and sorts.
  binding.preloadIndex([dir]);
  try {
    // Read and sorted by the core when the order needs no ICU (see collate.js).
    const names =
      (asciiOrderKnown() && binding.jsonlNamesDescending(dir)) ||
      (await readdir(dir)).filter((file) => file.endsWith(".jsonl")).sort((a, b) => b.localeCompare(a));
    const files = joinAll(dir, names);
    const total = files.length;
    const partialSessions = [];
    const publish = partialListCadence(CURRENT_SESSION_LIST_PUBLISH_INTERVAL);
    let loaded = 0;
    const results = await scanInfos(
      files,
      (info) => {
        loaded++;
        if (info) partialSessions.push(info);
        const publishPartial = publish(loaded, total, loaded === 1);
        onProgress?.(loaded, total, publishPartial ? sortSessionInfos([...partialSessions]) : undefined);
      },
      signal,
      onProgress !== undefined,
    );
    return results.filter((info) => info !== null);
  } catch {
    signal?.throwIfAborted();
    return [];
  }
}

async function list(cwd, sessionDir, onProgress, signal) {
  const dir = sessionDir ? normalizePath(sessionDir) : getDefaultSessionDir(cwd);
  const filterCwd = sessionDir !== undefined && !samePath(dir, getDefaultSessionDirPath(cwd));
  const resolvedCwd = resolvePath(cwd);
  // Each folder's sessions share a few cwds: an absolute POSIX one resolves the same every
  // time (no process cwd, no home dir), so it is matched once per listing.
  const matched = new Map();
  const includeSession = (session) => {
    if (!filterCwd) return true;
    const cwd = session.cwd;
    if (process.platform === "win32" || !cwd.startsWith("/")) return sessionCwdMatches(cwd, resolvedCwd);
    let match = matched.get(cwd);
    if (match === undefined) matched.set(cwd, (match = sessionCwdMatches(cwd, resolvedCwd)));
    return match;
  };
  const progress = onProgress
    ? (loaded, total, partialSessions) => onProgress(loaded, total, partialSessions?.filter(includeSession))
    : undefined;
  const sessions = (await listSessionsFromDir(dir, progress, signal)).filter(includeSession);
  return sortSessionInfos(sessions);
}

async function mapWithConcurrency(items, limit, map, signal) {
  const results = new Array(items.length);
  let nextIndex = 0;
  const worker = async () => {
    while (nextIndex < items.length) {
      signal?.throwIfAborted();
      const index = nextIndex++;
      results[index] = await map(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, () => worker()));
  return results;
}

/**
 * `listAll`'s discovery as the reference does it, for what the core's `discoverAll` leaves:
 * another runtime (Bun: its own stat and `localeCompare`), a name that is not UTF-8, or
 * files with equal mtimes whose names only ICU can order.
 */
async function discoverInJs(sessionsDir, abortSignal) {
  const entries = await readdir(sessionsDir, { withFileTypes: true });
  const dirs = entries
    .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
    .map((entry) => join(sessionsDir, entry.name));
  binding.preloadIndex(dirs);
  const dirFiles = await mapWithConcurrency(
    dirs,
    MAX_CONCURRENT_SESSION_DISCOVERY_LOADS,
    async (dir) => {
      try {
        return (await readdir(dir)).filter((file) => file.endsWith(".jsonl")).map((file) => join(dir, file));
      } catch {
        return [];
      }
    },
    abortSignal,
  );
  const allFiles = dirFiles.flat();
  const mtimes = NODE ? call(() => binding.mtimes(allFiles)) : statMtimes(allFiles);
  const candidates = allFiles.map((path, i) =>
    Number.isNaN(mtimes[i]) ? { path } : { path, stats: { mtimeMs: mtimes[i] } },
  );
  candidates.sort(
    (a, b) =>
      (b.stats?.mtimeMs ?? Number.NEGATIVE_INFINITY) - (a.stats?.mtimeMs ?? Number.NEGATIVE_INFINITY) ||
      compare(basename(b.path), basename(a.path)),
  );
  return candidates.map((c) => c.path);
}

async function listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
  const customSessionDir =
    typeof sessionDirOrOnProgress === "string" ? normalizePath(sessionDirOrOnProgress) : undefined;
  const progress =
    typeof sessionDirOrOnProgress === "function"
      ? sessionDirOrOnProgress
      : typeof onProgressOrSignal === "function"
        ? onProgressOrSignal
        : undefined;
  const abortSignal =
    typeof sessionDirOrOnProgress === "string" || typeof onProgressOrSignal === "function"
      ? signal
      : (onProgressOrSignal ?? signal);
  abortSignal?.throwIfAborted();
  if (customSessionDir) {
    return sortSessionInfos(await listSessionsFromDir(customSessionDir, progress, abortSignal));
  }
  const sessionsDir = getSessionsDir();
  try {
    if (!existsSync(sessionsDir)) return [];
    // One core call finds the files and sorts them (`discoverAll`); the JS way stays for
    // what it cannot answer (`discoverInJs`).
    const paths =
      (NODE &&
        call(() => binding.discoverAll(sessionsDir, join(sessionsDir, "a").slice(0, -1), sep, asciiOrderKnown()))) ||
      (await discoverInJs(sessionsDir, abortSignal));
    const totalFiles = paths.length;
    let loaded = 0;
    let firstCandidateLoaded = false;
    const partialSessions = [];
    const publish = partialListCadence(ALL_SESSION_LIST_PUBLISH_INTERVAL);
    const results = await scanInfos(
      paths,
      (info, index) => {
        loaded++;
        if (index === 0) firstCandidateLoaded = true;
        if (info) partialSessions.push(info);
        const publishPartial = firstCandidateLoaded && publish(loaded, totalFiles, index === 0);
        progress?.(loaded, totalFiles, publishPartial ? sortSessionInfos([...partialSessions]) : undefined);
      },
      abortSignal,
      progress !== undefined,
    );
    return sortSessionInfos(results.filter((info) => info !== null));
  } catch {
    abortSignal?.throwIfAborted();
    return [];
  }
}

module.exports = { findById, findMostRecentSession, getSessionHeaderCwd, list, listAll };
