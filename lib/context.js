"use strict";
// Context messages. The exported free functions are the reference's code, in JS because they take
// and return the caller's objects, with the seed format's compaction `retainedTail` as a checkpoint.
// The class asks the core which entries form its context (`tree::context_plan`) and builds their
// messages here (`projectPlan`). With them: pi's message constructors and pi-ai's system-message
// replay, key order included.

function contentText(content) {
  if (typeof content === "string") return content;
  return content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

function getCurrentTools(messages) {
  const tools = new Map();
  for (const message of messages) {
    if (message.role !== "system") continue;
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
    if (message.role !== "system") continue;
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

/** Walks from the leaf to the root. Unlike the reference, a cyclic chain throws. */
function buildSessionPath(entries, leafId, byId) {
  const index = byId || new Map(entries.map((entry) => [entry.id, entry]));
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
  const timestamp = () => new Date(entry.timestamp).getTime();
  if (entry.type === "custom_message") {
    const { customType } = entry;
    const content = entry.content ?? [];
    const { display, details } = entry;
    return [{ role: "custom", customType, content, display, details, timestamp: timestamp() }];
  }
  if (entry.type === "branch_summary" && entry.summary) {
    return [{ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: timestamp() }];
  }
  if (entry.type === "compaction") {
    const { summary: text, tokensBefore } = entry;
    const summary = { role: "compactionSummary", summary: text, tokensBefore, timestamp: timestamp() };
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

/** The replacement a context edit of `target` stores; throws for a target without model content. */
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
 * The reference's TypeError for a message entry without a message (`MessageMissing` in tree.rs):
 * the same property read, named as there (`entry`; `e` in `_hasConversation`), as JavaScriptCore
 * quotes the expression.
 */
function throwMessageMissing(entry) {
  void entry.message.role;
  throw new Error("pi-session-native internal error: the core reported a missing message that is there");
}

function throwMessageMissingInHasConversation(e) {
  void e.message.role;
  throw new Error("pi-session-native internal error: the core reported a missing message that is there");
}

/** The class's projection from the core's plan `[thinking, model, (position, edit, noMessages)…]`. */
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
