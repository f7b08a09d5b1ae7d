"use strict";
// `SessionInfo` objects, as pi 1.6.0's `buildSessionInfo` makes them. The core scans each file
// (`listing::info`) and JS shapes its row (`infoFromRow`): Dates, key order, the trims.
//
// The one JS copy of the reference's reading of a file stays here, `buildSessionInfoSlow`: a
// runtime whose readline splits lines elsewhere than Node's (Bun's also splits at U+2028 and
// U+2029, runtime.js) must list each file as the reference does on that readline, which the
// core's byte scan cannot know. Node never runs it.

const { createReadStream } = require("node:fs");
const { stat } = require("node:fs/promises");
const { createInterface } = require("node:readline");
const { mtimeDate } = require("./runtime.js");
const profile = require("./profile.js");
const { contentText } = require("./messages.js");

/**
 * Builds a SessionInfo from the core's scan row (see `listing::Rows`): its two texts are
 * `start..end` of the batch's block `which` (a string V8 reads in place; one per scanned
 * text, one per index frame).
 */
function infoFromRow(path, row, blocks) {
  const [
    header,
    rawName,
    messageCount,
    lastActivity,
    pendingTimes,
    firstBlock,
    firstStart,
    firstEnd,
    allBlock,
    allStart,
    allEnd,
    mtimeMs,
  ] = row;
  let lastActivityTime = lastActivity === null ? undefined : lastActivity;
  for (const ts of pendingTimes) {
    const t = new Date(ts).getTime();
    if (!Number.isNaN(t)) lastActivityTime = Math.max(lastActivityTime ?? 0, t);
  }
  const name = rawName === null ? undefined : rawName.trim() || undefined;
  const text = (which, start, end) => (start === end ? "" : blocks[which].slice(start, end));
  return makeInfo(path, header, name, lastActivityTime, () => mtimeDate(path, mtimeMs), {
    messageCount,
    firstMessage: text(firstBlock, firstStart, firstEnd),
    allMessagesText: text(allBlock, allStart, allEnd),
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
 * The reference's `buildSessionInfo`, for every file under a runtime whose readline splits lines
 * elsewhere than the core does (listing.js's scanInfos).
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

module.exports = { buildSessionInfoSlow, infoFromRow };
