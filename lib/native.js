"use strict";
// The generated napi loader, the one place where core errors become JS errors, and the ids the
// core makes (`ids.rs`).

const { getSystemErrorMap, types } = require("node:util");
const binding = require("../binding.js");
const { inOwnRealm, systemError } = require("./runtime.js");

const IO_MARK = "\u0000io:";
const STRING_TOO_LONG = ["Failed to convert rust `String` into napi `string`", "failed to create a string"];

/** Rebuilds the error Node's fs would have thrown for the same failed system call. */
function toJsError(err) {
  // Not instanceof: under Jest (a vm context) the addon's errors are another realm's.
  if (!types.isNativeError(err)) return err;
  // Past V8's longest string: the reference's readFileSync or split throws this RangeError.
  if (STRING_TOO_LONG.includes(err.message)) return new RangeError("Invalid string length");
  if (typeof err.message !== "string" || !err.message.startsWith(IO_MARK)) return inOwnRealm(err);
  const info = JSON.parse(err.message.slice(IO_MARK.length));
  const known = getSystemErrorMap().get(-info.errno);
  const code = known ? known[0] : "EIO";
  const desc = known ? known[1] : info.message;
  const message = `${code}: ${desc}, ${info.syscall}${info.path !== null ? ` '${info.path}'` : ""}`;
  // Own keys in the order this runtime's fs errors have them (runtime.js).
  return systemError(message, { errno: -info.errno, code, syscall: info.syscall, path: info.path });
}

/** Calls into the binding and converts its errors. */
function call(fn, ...args) {
  try {
    return fn(...args);
  } catch (err) {
    throw toJsError(err);
  }
}

/** pi-ai's `uuidv7()`, with its error once the sequence is exhausted. */
function uuidv7() {
  const id = binding.uuidv7();
  if (id === null) throw new RangeError("UUIDv7 generator sequence exhausted");
  return id;
}

module.exports = { binding, call, toJsError, uuidv7 };
