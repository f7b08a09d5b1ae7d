"use strict";
// Session discovery and listing. The core scans files in parallel off the main thread;
// this file orders them (`localeCompare` order, see collate.js; mtime) and shapes
// `SessionInfo` objects and progress calls exactly as pi 1.6.0 does.

const { createReadStream, existsSync, readdirSync, statSync } = require("node:fs");
const { readdir, stat } = require("node:fs/promises");
const { basename, join, sep } = require("node:path");
const { createInterface } = require("node:readline");
const { binding, call } = require("./native.js");
const { keyOf } = require("./keys.js");
const { asciiOrderKnown, compare } = require("./collate.js");
const { NODE, mtimeDate, readlineSplitsAsNode, statMtimes } = require("./runtime.js");
const { getDefaultSessionDirPath, getSessionsDir, normalizePath, resolvePath, samePath } = require("./paths.js");
const { getDefaultSessionDir } = require("./context.js");
const profile = require("./profile.js");
const { contentText } = require("./messages.js");

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

function findMostRecentSession(sessionDir, cwd) {
  const resolvedSessionDir = normalizePath(sessionDir);
  const resolvedCwd = cwd ? resolvePath(cwd) : undefined;
  try {
    if (!NODE) {
      // Equal mtimes keep the runtime's readdir order, which only Node's is known to be.
      const files = readdirSync(resolvedSessionDir)
        .filter((file) => file.endsWith(".jsonl"))
        .map((file) => join(resolvedSessionDir, file))
        .map((path) => ({ path, mtime: statSync(path).mtimeMs }))
        .sort((a, b) => b.mtime - a.mtime);
      for (const { path } of files) {
        const header = readHeaderForDiscovery(path);
        if (header && (!resolvedCwd || sessionCwdMatches(getSessionHeaderCwd(header), resolvedCwd))) return path;
      }
      return null;
    }
    // The newest few paths first: the answer is nearly always among them, and the rest
    // would be 1,000 strings built for nothing.
    let files = binding.filesByMtime(resolvedSessionDir, RECENT_FIRST);
    for (let i = 0; files !== null; i++) {
      if (i === files.length) {
        if (files.length < RECENT_FIRST || i > RECENT_FIRST) break;
        files = binding.filesByMtime(resolvedSessionDir, null);
        if (files === null || i === files.length) break;
      }
      const path = files[i];
      const header = readHeaderForDiscovery(path);
      if (header && (!resolvedCwd || sessionCwdMatches(getSessionHeaderCwd(header), resolvedCwd))) return path;
    }
    return null;
  } catch {
    return null;
  }
}

function findById(cwd, id, sessionDir) {
  const dir = sessionDir ? normalizePath(sessionDir) : getDefaultSessionDir(cwd);
  const filterCwd = sessionDir !== undefined && !samePath(dir, getDefaultSessionDirPath(cwd));
  const resolvedCwd = resolvePath(cwd);
  try {
    if (!NODE) {
      // The first match in the runtime's readdir order (the core's is Node's: by bytes).
      for (const file of readdirSync(dir)) {
        if (!file.endsWith(".jsonl")) continue;
        const path = join(dir, file);
        const header = readHeaderForDiscovery(path);
        if (header?.id !== id) continue;
        if (filterCwd && !sessionCwdMatches(getSessionHeaderCwd(header), resolvedCwd)) continue;
        return path;
      }
      return undefined;
    }
    // Batch by batch in directory order, as far as the first file that passes the filter.
    for (let from = 0; from !== null; ) {
      const batch = binding.headersWithId(dir, keyOf(id), from);
      if (batch === null) return undefined;
      const found = batch.found;
      for (let i = 0; i < found.length; i += 2) {
        const header = JSON.parse(found[i + 1]);
        if (filterCwd && !sessionCwdMatches(getSessionHeaderCwd(header), resolvedCwd)) continue;
        return found[i];
      }
      from = batch.next ?? null;
    }
  } catch {
    // Exact session discovery is best-effort, matching list().
  }
  return undefined;
}

// -----------------------------------------------------------------------------
// SessionInfo

/**
 * Builds a SessionInfo from the core's scan row (see `listing::Rows`): its two texts are
 * `start..end` of the batch's block `which` (a string V8 reads in place; one per scanned
 * text, one per index frame).
 */
function infoFromRow(path, row, blocks) {
  const [header, rawName, messageCount, lastActivity, pendingTimes, fw, fs, fe, aw, as, ae, mtimeMs] = row;
  let lastActivityTime = lastActivity === null ? undefined : lastActivity;
  for (const ts of pendingTimes) {
    const t = new Date(ts).getTime();
    if (!Number.isNaN(t)) lastActivityTime = Math.max(lastActivityTime ?? 0, t);
  }
  const name = rawName === null ? undefined : rawName.trim() || undefined;
  const text = (which, start, end) => (start === end ? "" : blocks[which].slice(start, end));
  return makeInfo(path, header, name, lastActivityTime, () => mtimeDate(path, mtimeMs), {
    messageCount,
    firstMessage: text(fw, fs, fe),
    allMessagesText: text(aw, as, ae),
  });
}

/** The tail of `buildSessionInfo`: the SessionInfo object, key order included. */
function makeInfo(path, header, name, lastActivityTime, fileMtime, { messageCount, firstMessage, allMessagesText }) {
  const cwd = typeof header.cwd === "string" ? header.cwd : "";
  const parentSessionPath = header.parentSession;
  const headerTime = typeof header.timestamp === "string" ? new Date(header.timestamp).getTime() : Number.NaN;
  const modified =
    typeof lastActivityTime === "number" && lastActivityTime > 0
      ? new Date(lastActivityTime)
      : !Number.isNaN(headerTime)
        ? new Date(headerTime)
        : fileMtime();
  return {
    path,
    id: header.id,
    cwd,
    name,
    parentSessionPath,
    created: new Date(header.timestamp),
    modified,
    messageCount,
    firstMessage: firstMessage || "(no messages)",
    allMessagesText,
  };
}

function parseSessionEntryLine(line) {
  if (!line.trim()) return null;
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

function isMessageWithContent(message) {
  return typeof message.role === "string" && "content" in message;
}

/** The text of a message's content, its text blocks joined by a space (pi's extractTextContent). */
const extractTextContent = (message) => contentText(message.content, " ");

function getMessageActivityTime(entry) {
  const message = entry.message;
  if (!isMessageWithContent(message)) return undefined;
  if (message.role !== "user" && message.role !== "assistant") return undefined;
  const msgTimestamp = message.timestamp;
  if (typeof msgTimestamp === "number") return msgTimestamp;
  const t = new Date(entry.timestamp).getTime();
  return Number.isNaN(t) ? undefined : t;
}

/**
 * The reference's `buildSessionInfo`, for the rare files the core hands back (and every file under
 * a runtime whose readline splits lines elsewhere, see scanInfos).
 *
 * Abort (profile switch `listingChecksAbortPerLine`): 1.6.0 checks the signal on every line and once
 * more after the loop. 1.5.x instead hands the signal to createReadStream: an abort while the file
 * is read fails it, but once the stream has ended the file is still listed. Here the per-line check
 * stands for both (an abort mid-file fails the file either way; which line it stops at is not
 * observable), and the check after the loop is 1.6.0's only: before it, an abort that arrives after
 * the last line gives the file's info, as 1.5.x does. The signal never goes to the stream, so 1.5.x's
 * crash is not reproduced: a file left after its first line (not a session), then an abort, destroys
 * the still-open stream with an 'error' nothing listens to (upstream #11956).
 * The window between the last line and the end of the loop is a few ticks of I/O: no deterministic
 * test tells the profiles apart here, nor in the native scan, whose rows are read before JS reports
 * them, and which stops at the next file after an abort in every profile (the reference's 10
 * concurrent reads make its progress calls after an abort a matter of I/O timing, in 1.5.x and 1.6.0
 * alike; measured: none after an abort from a progress callback, in both).
 */
async function buildSessionInfoSlow(filePath, signal) {
  try {
    const stats = await stat(filePath);
    let header = null;
    let messageCount = 0;
    let firstMessage = "";
    const allMessages = [];
    let name;
    let lastActivityTime;
    // Aborted before the read (during the stat): 1.5.x's stream fails at once; 1.6.0 fails at the
    // first line, or after the loop for an empty file. Either way the file fails.
    signal?.throwIfAborted();
    const stream = createReadStream(filePath, { encoding: "utf8" });
    try {
      const rl = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of rl) {
        signal?.throwIfAborted();
        const entry = parseSessionEntryLine(line);
        if (!entry) continue;
        if (!header) {
          if (entry.type !== "session") return null;
          header = entry;
          continue;
        }
        if (entry.type === "session_info") name = entry.name?.trim() || undefined;
        if (entry.type !== "message") continue;
        messageCount++;
        const activityTime = getMessageActivityTime(entry);
        if (typeof activityTime === "number") lastActivityTime = Math.max(lastActivityTime ?? 0, activityTime);
        const message = entry.message;
        if (!isMessageWithContent(message)) continue;
        if (message.role !== "user" && message.role !== "assistant") continue;
        const textContent = extractTextContent(message);
        if (!textContent) continue;
        allMessages.push(textContent);
        if (!firstMessage && message.role === "user") firstMessage = textContent;
      }
    } finally {
      stream.destroy();
    }
    // An abort while readline waited for the end of the file, after the last line (1.6.0 on).
    if (profile.has("listingChecksAbortPerLine")) signal?.throwIfAborted();
    if (!header) return null;
    return makeInfo(filePath, header, name, lastActivityTime, () => stats.mtime, {
      messageCount,
      firstMessage,
      allMessagesText: allMessages.join(" "),
    });
  } catch {
    signal?.throwIfAborted();
    return null;
  }
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
        const info =
          row === null
            ? null
            : row === 0
              ? await buildSessionInfoSlow(paths[index], signal)
              : infoFromRow(paths[index], row, blocks);
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
