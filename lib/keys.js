"use strict";
// How JS values cross into the core: Map keys (ids, parent ids, targets) as tagged strings, and the
// facts of an entry object, read as the reference reads them, from which the core derives a skeleton.

/** A JS value as a core key with `SameValueZero` semantics (objects match nothing). */
function keyOf(value) {
  switch (typeof value) {
    case "string":
      return value.isWellFormed() ? `s${value}` : `w${JSON.stringify(value)}`;
    case "number":
      return Number.isNaN(value) ? "o" : `n${String(value)}`;
    case "undefined":
      return "u";
    case "boolean":
      return value ? "t" : "f";
    case "object":
      return value === null ? "l" : "o";
    default:
      return "o";
  }
}

/** Pushes the facts `Skeleton::from_facts` takes; `entry.type` first (a null entry's TypeError). */
function pushFacts(out, entry) {
  const type = entry.type;
  const message = entry.message;
  let role = null;
  if (message !== null && message !== undefined) role = typeof message.role === "string" ? message.role : false;
  const ts = entry.timestamp;
  out.push(
    typeof type === "string" ? type : null,
    role,
    keyOf(entry.id),
    keyOf(entry.parentId),
    keyOf(entry.targetId),
    keyOf(entry.firstKeptEntryId),
    typeof ts === "string" ? ts : null,
    Boolean(entry.label),
    Array.isArray(entry.retainedTail),
  );
}

/** The facts of one entry as the core takes them (`commitLine`). */
function factsOf(entry) {
  const out = [];
  pushFacts(out, entry);
  return JSON.stringify(out);
}

/** Facts read as entries are added (a null entry throws then), pushed in one call when the core is asked. */
class PendingSkeletons {
  facts = [];

  add(entry) {
    pushFacts(this.facts, entry);
  }

  /** Pushes everything into `native` and empties the queue. */
  flushInto(native) {
    if (this.facts.length === 0) return;
    native.pushBatch(JSON.stringify(this.facts));
    this.facts = [];
  }
}

module.exports = { PendingSkeletons, factsOf, keyOf };
