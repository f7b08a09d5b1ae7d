"use strict";
// Context messages. The exported free functions (`buildSessionContext`, ...) are the reference's
// own code, kept in JS because they take and return the caller's objects (identity matters; the
// core holds none), with the seed format's compaction `retainedTail` honoured as a checkpoint. The
// class asks the core which entries form its context (`tree::context_plan`) and builds their
// messages here from its objects (`projectPlan`). pi's message constructors (`core/messages.js`)
// and pi-ai's system-message replay (`utils/transcript.js`) come with them, key order included.

function createBranchSummaryMessage(summary, fromId, timestamp) {
  return { role: "branchSummary", summary, fromId, timestamp: new Date(timestamp).getTime() };
}

function createCompactionSummaryMessage(summary, tokensBefore, timestamp) {
  return { role: "compactionSummary", summary: summary, tokensBefore, timestamp: new Date(timestamp).getTime() };
}

function createCustomMessage(customType, content, display, details, timestamp) {
  return { role: "custom", customType, content, display, details, timestamp: new Date(timestamp).getTime() };
}

function contentText(content) {
  if (typeof content === "string") return content;
  return content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

function isSystemMessage(message) {
  return message.role === "system";
}

function getCurrentTools(messages) {
  const tools = new Map();
  for (const message of messages) {
    if (!isSystemMessage(message)) continue;
    for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
    for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
  }
  return [...tools.values()];
}

/** pi-ai `getCurrentSystemMessage`: every system message replayed into one. */
function getCurrentSystemMessage(messages) {
  const content = [];
  const sections = new Map();
  let timestamp;
  for (const message of messages) {
    if (!isSystemMessage(message)) continue;
    timestamp ??= message.timestamp;
    const text = contentText(message.content);
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  const tools = getCurrentTools(messages);
  if (timestamp === undefined && tools.length === 0) return undefined;
  return {
    role: "system",
    content: content.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.length > 0 ? { toolsAdded: tools } : {}),
    timestamp: timestamp ?? 0,
  };
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
    if (path.length > limit) {
      throw new Error(`Session tree has a cycle in its parent chain at entry ${JSON.stringify(String(current?.id))}`);
    }
    path.push(current);
    current = current.parentId ? index.get(current.parentId) : undefined;
  }
  path.reverse();
  return path;
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

/** `appendContextEdit`'s first check, on the replacement alone. */
function assertEditReplacement(replacement) {
  if (
    replacement !== null &&
    (typeof replacement !== "object" ||
      !("content" in replacement) ||
      (typeof replacement.content !== "string" && !Array.isArray(replacement.content)))
  ) {
    throw new Error("Context edit replacement must be null or contain string/array content");
  }
}

/**
 * The replacement a context edit of `target` stores: string content becomes a text block for
 * the roles whose content is an array (as `projectContextEntry` reads it). Throws for a target
 * that contributes no editable model content.
 */
function editReplacementFor(target, targetId, replacement) {
  const editable =
    target.type === "custom_message" ||
    (target.type === "message" &&
      (target.message.role === "user" || target.message.role === "assistant" || target.message.role === "toolResult"));
  if (!editable) throw new Error(`Entry ${targetId} does not contribute editable model content`);
  const targetRole = target.type === "message" ? target.message.role : "custom";
  return replacement !== null &&
    (targetRole === "assistant" || targetRole === "toolResult") &&
    typeof replacement.content === "string"
    ? { content: [{ type: "text", text: replacement.content }] }
    : replacement;
}

/**
 * Throws the TypeError the reference throws where the core found a message entry without a
 * message (`MessageMissing` in tree.rs): the same property read, so the engine words it. Its
 * text may quote the expression (JavaScriptCore's does), so the variable is named as in the
 * reference: `entry` in the context functions, `e` in `_hasConversation` (the next function).
 */
function throwMessageMissing(entry) {
  void entry.message.role;
  throw new Error("pi-session-native internal error: the core reported a missing message that is there");
}

function throwMessageMissingInHasConversation(e) {
  void e.message.role;
  throw new Error("pi-session-native internal error: the core reported a missing message that is there");
}

/**
 * The class's projection from the core's context plan `[thinking, model, (position, edit,
 * noMessages)…]`: the core chose the entries, this builds their messages from the objects
 * (`at(position)`, `atMany(positions)`).
 */
function projectPlan(plan, entries) {
  let thinkingLevel = "off";
  if (plan[0] >= 0) thinkingLevel = entries.at(plan[0]).thinkingLevel;
  let model = null;
  if (plan[1] >= 0) {
    const e = entries.at(plan[1]);
    model =
      e.type === "model_change"
        ? { provider: e.provider, modelId: e.modelId }
        : { provider: e.message.provider, modelId: e.message.model };
  }
  const positions = [];
  for (let i = 2; i < plan.length; i += 3) positions.push(plan[i]);
  const sources = entries.atMany(positions);
  return projection(
    sources,
    (k) => plan[4 + 3 * k] === 1,
    (k) => (plan[3 + 3 * k] >= 0 ? entries.at(plan[3 + 3 * k]) : undefined),
    thinkingLevel,
    model,
  );
}

module.exports = {
  assertEditReplacement,
  buildContextEntries,
  buildSessionContext,
  buildSessionProjection,
  editReplacementFor,
  getCurrentSystemMessage,
  getLatestCompactionEntry,
  projectContextEntry,
  projectPlan,
  sessionEntryToContextMessages,
  throwMessageMissing,
  throwMessageMissingInHasConversation,
};
