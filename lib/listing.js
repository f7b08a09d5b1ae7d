"use strict";
// Session discovery and listing. The core finds, orders and scans the files off the main thread;
// this shapes `SessionInfo` objects (Dates, key order, trims) and progress calls as pi 1.6.0 does.

const { existsSync } = require("node:fs");
const { readdir } = require("node:fs/promises");
const { basename, join, sep } = require("node:path");
const { binding, call } = require("./native.js");
const { keyOf } = require("./keys.js");
const { NODE, asciiOrderKnown, compare, unicodeLineBreaks } = require("./runtime.js");
const paths = require("./paths.js");

const { getDefaultSessionDir, getDefaultSessionDirPath, getSessionsDir, normalizePath, resolvePath, samePath } = paths;

const CURRENT_SESSION_LIST_PUBLISH_INTERVAL = 10;
const ALL_SESSION_LIST_PUBLISH_INTERVAL = 100;
const SCAN_BATCH = 32;
/** With a progress callback, the longest run of callbacks without a turn of the event loop. */
const YIELD_MS = 50;
/** pi-native's partial-list cadence, when pi/swap.js sets one (never the library). */
const PARTIAL_LISTS = Symbol.for("pi-session-native.partialLists");

/** Decides, per loaded file, whether its progress call carries a partial list. */
function partialListCadence(everyFiles) {
  if (typeof globalThis[PARTIAL_LISTS] === "function") return globalThis[PARTIAL_LISTS]();
  return (loaded, total, first) => first || loaded % everyFiles === 0 || loaded === total;
}

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

/** The session files of `dir`, newest first; the newest 8 first, where the answer nearly always is. */
function* newestFirst(dir) {
  const first = binding.filesByMtime(dir, 8, !NODE);
  if (first === null) return;
  yield* first;
  if (first.length < 8) return;
  const all = binding.filesByMtime(dir, null, !NODE);
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

/** `[path, header]` of each session file of `dir` whose id is `id`, in readdir order, read in batches. */
function* filesWithId(dir, id) {
  for (let from = 0; from !== null; ) {
    const batch = binding.headersWithId(dir, keyOf(id), from, !NODE);
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

/**
 * `buildSessionInfo`'s object from the core's row (`listing::Rows`): `[header, name, messageCount,
 * lastActivity, pendingTimes, (block, start, end) of firstMessage and of allMessagesText, mtimeMs]`.
 */
function infoFromRow(path, row, blocks) {
  const [header, rawName, messageCount, lastActivity, pendingTimes] = row;
  let lastActivityTime = lastActivity === null ? undefined : lastActivity;
  for (const ts of pendingTimes) {
    const t = new Date(ts).getTime();
    if (!Number.isNaN(t)) lastActivityTime = Math.max(lastActivityTime ?? 0, t);
  }
  const text = (k) => (row[k + 1] === row[k + 2] ? "" : blocks[row[k]].slice(row[k + 1], row[k + 2]));
  const headerTime = typeof header.timestamp === "string" ? new Date(header.timestamp).getTime() : Number.NaN;
  const modified =
    typeof lastActivityTime === "number" && lastActivityTime > 0
      ? new Date(lastActivityTime)
      : !Number.isNaN(headerTime)
        ? new Date(headerTime)
        : // `stats.mtime`: Node rounds `mtimeMs`, Bun truncates it (as `new Date` does).
          new Date(NODE ? Math.round(row[11]) : row[11]);
  return {
    path,
    id: header.id,
    cwd: typeof header.cwd === "string" ? header.cwd : "",
    name: rawName === null ? undefined : rawName.trim() || undefined,
    parentSessionPath: header.parentSession,
    created: new Date(header.timestamp),
    modified,
    messageCount,
    firstMessage: text(5) || "(no messages)",
    allMessagesText: text(8),
  };
}

function sortSessionInfos(sessions) {
  return sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/**
 * Scans `paths` in native batches, calling `onLoaded(info, index)` in order; resolves to the infos
 * (null for non-sessions). `responsive`: the event loop gets turns, as the reference's reads give it.
 */
async function scanInfos(paths, onLoaded, signal, responsive) {
  const results = new Array(paths.length);
  const unicodeBreaks = !NODE && (await unicodeLineBreaks());
  const flag = new binding.AbortFlag();
  const onAbort = () => flag.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let complete = false;
  try {
    const scanner = new binding.InfoScanner(paths, flag, unicodeBreaks);
    let since = performance.now();
    for (let start = 0; start < paths.length; ) {
      signal?.throwIfAborted();
      // At least SCAN_BATCH rows, and all after them that are ready.
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
    // The listing index is written in the background; it never fails.
    complete = true;
    scanner.finish().catch(() => {});
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!complete) flag.abort();
  }
  return results;
}

/** The sessions of `paths`, with `onProgress(loaded, total, partial list?)` per file, as the reference calls it. */
async function scanWithProgress(paths, everyFiles, onProgress, signal) {
  const partialSessions = [];
  const publish = partialListCadence(everyFiles);
  let loaded = 0;
  const onLoaded = (info, index) => {
    loaded++;
    if (info) partialSessions.push(info);
    const publishPartial = publish(loaded, paths.length, index === 0);
    onProgress?.(loaded, paths.length, publishPartial ? sortSessionInfos([...partialSessions]) : undefined);
  };
  const results = await scanInfos(paths, onLoaded, signal, onProgress !== undefined);
  return results.filter((info) => info !== null);
}

/** `names.map((name) => join(dir, name))`, the folder part normalised once. */
function joinAll(dir, names) {
  const prefix = join(dir, "a").slice(0, -1);
  if (names.length > 0 && join(dir, names[0]) !== prefix + names[0]) return names.map((name) => join(dir, name));
  return names.map((name) => prefix + name);
}

async function listSessionsFromDir(dir, onProgress, signal) {
  signal?.throwIfAborted();
  if (!existsSync(dir)) return [];
  // Read on another thread meanwhile, where the scan will use it.
  if (NODE || !(await unicodeLineBreaks())) binding.preloadIndex([dir]);
  try {
    const names =
      (asciiOrderKnown() && binding.jsonlNamesDescending(dir)) ||
      (await readdir(dir)).filter((file) => file.endsWith(".jsonl")).sort((a, b) => b.localeCompare(a));
    return await scanWithProgress(joinAll(dir, names), CURRENT_SESSION_LIST_PUBLISH_INTERVAL, onProgress, signal);
  } catch {
    signal?.throwIfAborted();
    return [];
  }
}

async function list(cwd, sessionDir, onProgress, signal) {
  const dir = sessionDir ? normalizePath(sessionDir) : getDefaultSessionDir(cwd);
  const filterCwd = sessionDir !== undefined && !samePath(dir, getDefaultSessionDirPath(cwd));
  const resolvedCwd = resolvePath(cwd);
  // A folder's sessions share a few cwds: an absolute POSIX one is matched once per listing.
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
    // The core finds and sorts the files, but for runs of equal mtimes only `localeCompare` orders.
    const prefix = join(sessionsDir, "a").slice(0, -1);
    const preloadIndex = NODE || !(await unicodeLineBreaks());
    const { paths, ties } = call(() =>
      binding.discoverAll(sessionsDir, prefix, sep, asciiOrderKnown(), !NODE, preloadIndex),
    );
    for (let i = 0; i < ties.length; i += 2) {
      const run = paths.slice(ties[i], ties[i + 1]).sort((a, b) => compare(basename(b), basename(a)));
      for (let k = 0; k < run.length; k++) paths[ties[i] + k] = run[k];
    }
    return sortSessionInfos(await scanWithProgress(paths, ALL_SESSION_LIST_PUBLISH_INTERVAL, progress, abortSignal));
  } catch {
    abortSignal?.throwIfAborted();
    return [];
  }
}

module.exports = { findById, findMostRecentSession, getSessionHeaderCwd, list, listAll };
