"use strict";
// The exported free functions of pi 1.6.0's session-manager module: a JS copy of the reference
// that stays, because they take and return the caller's own objects (identity matters; the core
// holds no objects). The class answers the same questions with the core (class-context.js); these
// run on what the caller hands in. The seed format's compaction `retainedTail` is honoured as a
// checkpoint.

const { existsSync, mkdirSync } = require("node:fs");
const { getAgentDir, getDefaultSessionDirPath } = require("./paths.js");
const { CURRENT_SESSION_VERSION, migrateSessionEntries, migrateToCurrentVersion } = require("./migrate.js");
const { createBranchSummaryMessage, createCompactionSummaryMessage, createCustomMessage } = require("./messages.js");

function assertValidSessionId(id) {
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(id)) {
    throw new Error(
      "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character",
    );
  }
}

function parseSessionEntries(content) {
  const entries = [];
  const lines = content.trim().split("\n");
  for (const line of lines) {
    if (!line.trim()) continue;
    try {
      const entry = JSON.parse(line);
      entries.push(entry);
    } catch {
      // Skip malformed lines
    }
  }
  return entries;
}

function getLatestCompactionEntry(entries) {
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].type === "compaction") return entries[i];
  }
  return null;
}

function buildEntryIndex(entries, byId) {
  if (byId) return byId;
  const index = new Map();
  for (const entry of entries) index.set(entry.id, entry);
  return index;
}

/** Walks from the leaf to the root. Unlike the reference, a cyclic chain throws. */
function buildSessionPath(entries, leafId, byId) {
  const index = buildEntryIndex(entries, byId);
  let leaf;
  if (leafId === null) return [];
  if (leafId) leaf = index.get(leafId);
  leaf ??= entries[entries.length - 1];
  if (!leaf) return [];
  const path = [];
  const limit = index.size + entries.length + 1;
  let current = leaf;
  while (current) {
    if (path.length > limit) throw cycleError(current);
    path.push(current);
    current = current.parentId ? index.get(current.parentId) : undefined;
  }
  path.reverse();
  return path;
}

function cycleError(entry) {
  return new Error(`Session tree has a cycle in its parent chain at entry ${JSON.stringify(String(entry?.id))}`);
}

function getSessionContextSettings(path) {
  let thinkingLevel = "off";
  let model = null;
  for (const entry of path) {
    if (entry.type === "thinking_level_change") {
      thinkingLevel = entry.thinkingLevel;
    } else if (entry.type === "model_change") {
      model = { provider: entry.provider, modelId: entry.modelId };
    } else if (entry.type === "message" && entry.message.role === "assistant") {
      model = { provider: entry.message.provider, modelId: entry.message.model };
    }
  }
  return { thinkingLevel, model };
}

function sessionEntryToContextMessages(entry) {
  if (entry.type === "message") {
    const message = entry.message;
    if (message.role === "system" && message.content == null) return [{ ...message, content: "" }];
    if (
      (message.role === "user" || message.role === "assistant" || message.role === "toolResult") &&
      message.content == null
    ) {
      return [{ ...message, content: [] }];
    }
    return [message];
  }
  if (entry.type === "custom_message") {
    return [createCustomMessage(entry.customType, entry.content ?? [], entry.display, entry.details, entry.timestamp)];
  }
  if (entry.type === "branch_summary" && entry.summary) {
    return [createBranchSummaryMessage(entry.summary, entry.fromId, entry.timestamp)];
  }
  if (entry.type === "compaction") {
    const summary = createCompactionSummaryMessage(entry.summary, entry.tokensBefore, entry.timestamp);
    const head = entry.systemMessage ? [entry.systemMessage, summary] : [summary];
    // Seed format: a compaction with `retainedTail` carries its kept messages itself.
    return Array.isArray(entry.retainedTail) ? [...head, ...entry.retainedTail] : head;
  }
  return [];
}

function buildContextEntries(entries, leafId, byId) {
  const path = buildSessionPath(entries, leafId, byId);
  let compaction = null;
  for (const entry of path) {
    if (entry.type === "compaction") compaction = entry;
  }
  if (!compaction) return path;
  const compactionIdx = path.findIndex((entry) => entry.id === compaction.id);
  if (compactionIdx < 0) return path;
  const contextEntries = [compaction];
  if (!Array.isArray(compaction.retainedTail)) {
    let foundFirstKept = false;
    for (let i = 0; i < compactionIdx; i++) {
      const entry = path[i];
      if (entry.id === compaction.firstKeptEntryId) foundFirstKept = true;
      if (foundFirstKept && !(entry.type === "message" && entry.message.role === "system")) {
        contextEntries.push(entry);
      }
    }
  }
  contextEntries.push(...path.slice(compactionIdx + 1));
  return contextEntries;
}

function projectContextEntry(entry, edit) {
  const messages = sessionEntryToContextMessages(entry);
  if (!edit) return messages;
  const replacement = edit.replacement;
  if (replacement === null) return [];
  return messages.map((message) => {
    if (
      message.role !== "user" &&
      message.role !== "assistant" &&
      message.role !== "toolResult" &&
      message.role !== "custom"
    ) {
      return message;
    }
    const content =
      (message.role === "assistant" || message.role === "toolResult") && typeof replacement.content === "string"
        ? [{ type: "text", text: replacement.content }]
        : replacement.content;
    return { ...message, content };
  });
}

/**
 * The projection of the context entries `sources`: `silent(k)` tells whether the k-th contributes no
 * messages (an older compaction), `editOf(k)` gives the context edit that applies to it.
 */
function projection(sources, silent, editOf, thinkingLevel, model) {
  const projectedEntries = sources.map((sourceEntry, k) => ({
    sourceEntry,
    messages: silent(k) ? [] : projectContextEntry(sourceEntry, editOf(k)),
  }));
  return {
    entries: projectedEntries,
    messages: projectedEntries.flatMap((entry) => entry.messages),
    thinkingLevel,
    model,
  };
}

function buildSessionProjection(entries, leafId, byId) {
  const path = buildSessionPath(entries, leafId, byId);
  const { thinkingLevel, model } = getSessionContextSettings(path);
  const contextEntries = buildContextEntries(entries, leafId, byId);
  const edits = new Map();
  for (const entry of contextEntries) {
    if (entry.type === "context_edit") edits.set(entry.targetId, entry);
  }
  return projection(
    contextEntries,
    (k) => contextEntries[k].type === "compaction" && k > 0,
    (k) => edits.get(contextEntries[k].id),
    thinkingLevel,
    model,
  );
}

function buildSessionContext(entries, leafId, byId) {
  const { messages, thinkingLevel, model } = buildSessionProjection(entries, leafId, byId);
  return { messages, thinkingLevel, model };
}

function getDefaultSessionDir(cwd, agentDir = getAgentDir()) {
  const sessionDir = getDefaultSessionDirPath(cwd, agentDir);
  if (!existsSync(sessionDir)) mkdirSync(sessionDir, { recursive: true });
  return sessionDir;
}

module.exports = {
  CURRENT_SESSION_VERSION,
  assertValidSessionId,
  buildContextEntries,
  buildSessionContext,
  buildSessionProjection,
  getDefaultSessionDir,
  getLatestCompactionEntry,
  migrateSessionEntries,
  migrateToCurrentVersion,
  parseSessionEntries,
  projectContextEntry,
  projection,
  sessionEntryToContextMessages,
};
