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

/** `new Date(timestamp).getTime()`, or Infinity ("compute later") if that would throw. */
function timeOf(timestamp) {
  try {
    return new Date(timestamp).getTime();
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Pushes an entry object's skeleton into a NativeSession. Reads `entry.type` first, so a
 * null entry throws the reference's TypeError. */
function pushSkeleton(native, entry) {
  const ty = typeCode(entry.type);
  let target = "u";
  if (ty === T.label || ty === T.context_edit) target = keyOf(entry.targetId);
  else if (ty === T.compaction) target = keyOf(entry.firstKeptEntryId);
  return native.push(
    ty,
    keyOf(entry.id),
    keyOf(entry.parentId),
    target,
    ty === T.label && !!entry.label,
    ty === T.message ? roleCode(entry.message) : ROLE_OTHER,
    ty === T.compaction && Array.isArray(entry.retainedTail),
    timeOf(entry.timestamp),
  );
}

module.exports = { keyOf, pushSkeleton, timeOf };
