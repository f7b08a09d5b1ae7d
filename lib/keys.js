"use strict";
// How JS values cross into the core: Map keys (ids, parent ids, targets) as tagged strings,
// and the skeleton of an entry object that the facade built or was handed.

const TYPE_CODES = new Map(
  [
    "session",
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "context_edit",
    "label",
    "session_info",
    "usage",
  ].map((name, code) => [name, code]),
);
const TYPE_OTHER = 12;
const T = Object.fromEntries([...TYPE_CODES].map(([k, v]) => [k, v]));

const ROLE_CODES = new Map(
  ["user", "assistant", "toolResult", "system", "custom", "hookMessage"].map((name, i) => [name, i + 1]),
);
const ROLE_NO_MESSAGE = 0;
const ROLE_OTHER = 7;

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

function typeCode(type) {
  return typeof type === "string" ? (TYPE_CODES.get(type) ?? TYPE_OTHER) : TYPE_OTHER;
}

function roleCode(message) {
  if (message === null || message === undefined) return ROLE_NO_MESSAGE;
  const role = message.role;
  return typeof role === "string" ? (ROLE_CODES.get(role) ?? ROLE_OTHER) : ROLE_OTHER;
}

/**
 * `new Date(timestamp).getTime()`. It throws where the reference's getTree comparator throws (a
 * timestamp like `{ "toString": 1 }` has no primitive value), so the TypeError is not swallowed.
 */
function timeOf(timestamp) {
  return new Date(timestamp).getTime();
}

/**
 * Skeletons of entry objects waiting to be pushed into a NativeSession in one call. They
 * are computed when the entry is added (reading `entry.type` first, so a null entry throws
 * the reference's TypeError at the same moment), and pushed when the core is next asked.
 */
class PendingSkeletons {
  flags = [];
  fields = [];

  get length() {
    return this.flags.length;
  }

  add(entry) {
    const ty = typeCode(entry.type);
    let target = "u";
    if (ty === T.label || ty === T.context_edit) target = keyOf(entry.targetId);
    else if (ty === T.compaction) target = keyOf(entry.firstKeptEntryId);
    const ts = entry.timestamp;
    this.flags.push(skeletonFlags(ty, entry));
    this.fields.push(keyOf(entry.id), keyOf(entry.parentId), target, typeof ts === "string" ? ts : "");
  }

  /** Pushes everything into `native` and empties the queue. */
  flushInto(native) {
    if (this.flags.length === 0) return;
    native.pushBatch(Uint32Array.from(this.flags), JSON.stringify(this.fields));
    this.flags = [];
    this.fields = [];
  }
}

/** type | role << 4 | label truthy << 8 | retainedTail << 9 (see `NativeSession.pushBatch`). */
function skeletonFlags(ty, entry) {
  const role = ty === T.message ? roleCode(entry.message) : ROLE_OTHER;
  const labelTruthy = ty === T.label && entry.label ? 1 : 0;
  const retainedTail = ty === T.compaction && Array.isArray(entry.retainedTail) ? 1 : 0;
  return ty | (role << 4) | (labelTruthy << 8) | (retainedTail << 9);
}

/** The target key of an entry (label/context edit `targetId`, compaction `firstKeptEntryId`). */
function targetKey(ty, entry) {
  if (ty === T.label || ty === T.context_edit) return keyOf(entry.targetId);
  if (ty === T.compaction) return keyOf(entry.firstKeptEntryId);
  return "u";
}

module.exports = { PendingSkeletons, T, keyOf, skeletonFlags, targetKey, timeOf, typeCode };
