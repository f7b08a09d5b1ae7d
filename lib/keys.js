"use strict";
// How JS values cross into the core: Map keys (ids, parent ids, targets) as tagged strings,
// and the facts of an entry object the facade built or was handed, from which the core derives
// its skeleton. Reading them is JS: they are JS values, read as the reference reads them.

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

/**
 * Pushes what the core needs of `entry` onto `out`, as JS sees its values (see
 * `Skeleton::from_facts`, which derives the skeleton): type, role, the id keys, timestamp,
 * label truthiness, whether retainedTail is an array. `entry.type` is read first, so that a
 * null entry throws the reference's TypeError.
 */
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

/**
 * Entry objects waiting to be pushed into a NativeSession in one call. Their facts are read
 * when the entry is added (a null entry throws the reference's TypeError at that moment), and
 * pushed when the core is next asked.
 */
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
