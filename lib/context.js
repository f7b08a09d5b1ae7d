"use strict";
// Context messages: the objects of pi's context. Which entries form it (compaction, `retainedTail`,
// edits, model and thinking level) is the core's rule (`tree::context_plan`): the class asks its
// core, the exported free functions send the facts of the caller's objects (`linkedPlan`). Here:
// building the messages from the objects a plan names (`projectPlan`), pi's message constructors
// and pi-ai's system-message replay, key order included.

const { binding, call } = require("./native.js");

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

/** Values per object in the facts `contextPlanOf` takes (`Skeleton::linked_from_facts`). */
const FACTS = 7;

/** Type and role strings by number, kept between calls (a few; started again past 256), and as JSON. */
let names = new Map();
let namesJson = "[]";

function nameOf(value) {
  if (typeof value !== "string") return -1;
  let n = names.get(value);
  if (n === undefined) {
    if (names.size >= 256) names = new Map();
    names.set(value, (n = names.size));
    namesJson = JSON.stringify([...names.keys()]);
  }
  return n;
}

/**
 * pi's context rule from the core (`contextPlanOf`) over the caller's objects: the plan and the
 * objects its positions name. The objects are those `buildSessionPath(entries, leafId, byId)` can
 * reach, each sent as the facts the rule reads, its `parentId` resolved through the index (the
 * caller's `byId`, else every entry by id, the last winning, as the reference builds it), which only
 * JS can query. Ids cross as JS's `SameValueZero` classes: own positions in the entries' index, else
 * numbered here. Nothing is read for a null `leafId`, where the reference reads nothing either.
 */
function linkedPlan(entries, leafId, byId, entriesOnly) {
  const items = [];
  // Items the entries' own index holds: the index maps each one's id to its own position.
  let indexed = 0;
  let index = byId;
  // The position of what `index.get` gave: the call sites spell `index.get(…)` as the reference
  // does, since JavaScriptCore's TypeError for a `byId` without `get` quotes the expression.
  let slot;
  let keyOf;
  if (!index) {
    index = new Map();
    for (const entry of entries) {
      index.set(entry.id, items.length);
      items.push(entry);
    }
    indexed = items.length;
    slot = (value) => value ?? -1;
    const undefinedKey = index.get(undefined) ?? -1;
    // biome-ignore lint/suspicious/noSelfCompare: NaN, which a Map finds and `===` does not
    keyOf = (key) => (key === undefined ? undefinedKey : key !== key ? -2 : (index.get(key) ?? -1));
  } else {
    const itemOf = new Map();
    slot = (value) => {
      if (value === null || value === undefined) return -1;
      if (!value) return -2;
      let p = itemOf.get(value);
      if (p === undefined) {
        p = items.push(value) - 1;
        itemOf.set(value, p);
      }
      return p;
    };
    const keys = new Map();
    keyOf = (key) => {
      // biome-ignore lint/suspicious/noSelfCompare: NaN, which a Map finds and `===` does not
      if (key !== key) return -2;
      let k = keys.get(key);
      if (k === undefined) keys.set(key, (k = keys.size));
      return k;
    };
  }
  let leaf = -3;
  let last = -1;
  const todo = [];
  if (leafId !== null) {
    leaf = leafId ? slot(index.get(leafId)) : -1;
    const lastEntry = entries[entries.length - 1];
    if (lastEntry) last = !byId && items.at(-1) === lastEntry ? items.length - 1 : items.push(lastEntry) - 1;
    todo.push(leaf, last);
  }
  let facts = new Int32Array(FACTS * (items.length + 2));
  while (todo.length > 0) {
    const p = todo.pop();
    // Flag 2: the item's facts are read (those of items no walk reaches stay zero, never read).
    if (p < 0 || (facts[FACTS * p + 6] & 2) !== 0) continue;
    const current = items[p];
    const parent = current.parentId ? Math.max(slot(index.get(current.parentId)), -1) : -1;
    todo.push(parent);
    if (facts.length < FACTS * items.length) {
      const grown = new Int32Array(FACTS * 2 * items.length);
      grown.set(facts);
      facts = grown;
    }
    const message = current.message;
    let k = FACTS * p;
    facts[k++] = nameOf(current.type);
    facts[k++] = message === null || message === undefined ? -2 : nameOf(message.role);
    const id = current.id;
    // biome-ignore lint/suspicious/noSelfCompare: NaN, which a Map finds and `===` does not
    facts[k++] = p < indexed && id === id ? p : keyOf(id);
    facts[k++] = keyOf(current.targetId);
    facts[k++] = keyOf(current.firstKeptEntryId);
    facts[k++] = parent;
    facts[k] = 2 | (Array.isArray(current.retainedTail) ? 1 : 0);
  }
  const plan = call(() => binding.contextPlanOf(namesJson, facts, items.length, leaf, last, entriesOnly));
  if (typeof plan === "number") {
    if (plan >= 0) throwMessageMissing(items[plan]);
    const at = items[-1 - plan];
    throw new Error(`Session tree has a cycle in its parent chain at entry ${JSON.stringify(String(at?.id))}`);
  }
  return { plan, items };
}

/** Objects at positions, for `projectPlan`. */
function itemsAt(items) {
  return { at: (p) => items[p], atMany: (positions) => Array.from(positions, (p) => items[p]) };
}

function buildContextEntries(entries, leafId, byId) {
  const { plan, items } = linkedPlan(entries, leafId, byId, true);
  const out = new Array((plan.length - 2) / 3);
  for (let k = 0; k < out.length; k++) out[k] = items[plan[2 + 3 * k]];
  return out;
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
  const { plan, items } = linkedPlan(entries, leafId, byId, false);
  return projectPlan(plan, itemsAt(items));
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
