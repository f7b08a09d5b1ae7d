"use strict";
// The answers that come from the JS runtime rather than from ECMAScript, where the facade
// has a fast way to give Node's and must give the runtime's own answer elsewhere (Bun,
// Deno). ECMAScript fixes the rest (JSON.stringify's numbers, ISO date strings, key order,
// Array.prototype.sort's stability); the engine's own text is left to the engine (a
// TypeError from a property access is thrown by the same expression as in pi's code).
//
// On Node (V8, libuv):
// - `localeCompare` of printable ASCII under an English default locale is V8's fixed
//   weight table (collate.js; the core holds the table);
// - `readdirSync` lists names as libuv's scandir does (sorted by bytes on Unix), and the
//   core's discovery keeps that order for equal mtimes (`platform::jsonl_stats`, used by
//   `discovery::files_by_mtime` and `headers_with_id`);
// - `stats.mtime` is `new Date(Math.round(mtimeMs))`;
// - fs errors have their own keys in the order errno, code, syscall, path (their realm is
//   asked on every runtime: under a vm context it is not the caller's);
// - readline splits lines only at \n, \r\n and \r, as the core splits a listed file.
// Elsewhere each of these is asked of the runtime itself: `localeCompare`, `readdirSync`
// (Bun lists in the directory's own order), `statSync().mtime` (Bun truncates), the key
// order of an fs error the runtime threw, and how its readline splits a probe text (Bun's
// also splits at U+2028 and U+2029: then every listed file is read by the reference's
// algorithm on the runtime's own readline, listing.js).

const { readdirSync, statSync } = require("node:fs");

/** Node itself: V8 with libuv's fs. Bun reports a Node version too, and a V8 one. */
const NODE = typeof process.versions.bun !== "string" && typeof process.versions.deno !== "string";

const NODE_ERROR_KEYS = ["errno", "code", "syscall", "path"];
let template;

/**
 * What an fs error thrown by this runtime looks like: its constructor (under Vitest's
 * vmThreads or Jest the test's realm is a vm context, and Node's fs errors come from the
 * outer realm: `instanceof Error` is false there) and the order of its own keys.
 */
function systemErrorTemplate() {
  if (template !== undefined) return template;
  template = { Ctor: Error, keys: NODE_ERROR_KEYS };
  try {
    readdirSync(__filename); // a file, not a folder: ENOTDIR, with a path
  } catch (err) {
    const keys = Object.keys(err);
    if (typeof err?.constructor === "function" && NODE_ERROR_KEYS.every((k) => keys.includes(k))) {
      template = {
        Ctor: err.constructor,
        keys: NODE ? NODE_ERROR_KEYS : keys.filter((k) => NODE_ERROR_KEYS.includes(k)),
      };
    }
  }
  return template;
}

/** An fs error with `message` and `fields` (errno, code, syscall, path when not null), as this runtime's fs makes them. */
function systemError(message, fields) {
  const { Ctor, keys } = systemErrorTemplate();
  const out = new Ctor(message);
  for (const k of keys) if (k !== "path" || fields.path !== null) out[k] = fields[k];
  return out;
}

const OWN_ERRORS = { Error, RangeError, SyntaxError, TypeError };

/**
 * An error the addon threw, as an error of this module's realm: N-API makes its errors in
 * the realm the addon was loaded in, which under a vm context (Vitest's vmThreads, Jest) is
 * not the one the facade (and the reference) throw theirs in. The same error where they are one.
 */
function inOwnRealm(err) {
  if (err instanceof Error) return err;
  const out = new (OWN_ERRORS[err.name] ?? Error)(err.message);
  for (const k of Object.keys(err)) out[k] = err[k];
  return out;
}

/** `stats.mtime` of the file at `path` whose `mtimeMs` the core read. */
function mtimeDate(path, mtimeMs) {
  if (NODE) return new Date(Math.round(mtimeMs));
  try {
    return statSync(path).mtime;
  } catch {
    return new Date(mtimeMs);
  }
}

/** `stats.mtimeMs` of each path as this runtime's `stat` gives it, NaN where it fails. */
function statMtimes(paths) {
  return paths.map((path) => {
    try {
      return statSync(path).mtimeMs;
    } catch {
      return Number.NaN;
    }
  });
}

// Line ends of every kind, and a \r\n split between two chunks (crlfDelay: Infinity).
const PROBE_CHUNKS = ["a\u2028b\u2029c\u0085d\ve\ff\rg\r", "\nh\r\ri\n\nj", "\rk"];
const NODE_LINES = ["a\u2028b\u2029c\u0085d\ve\ff", "g", "h", "", "i", "", "j", "k"];
let readlineProbe;

/** Whether this runtime's readline splits lines where Node's does (asked once; never on Node). */
function readlineSplitsAsNode() {
  if (NODE) return Promise.resolve(true);
  readlineProbe ??= (async () => {
    try {
      const { createInterface } = require("node:readline");
      const { Readable } = require("node:stream");
      const lines = [];
      const rl = createInterface({ input: Readable.from(PROBE_CHUNKS), crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of rl) lines.push(line);
      return lines.length === NODE_LINES.length && lines.every((line, i) => line === NODE_LINES[i]);
    } catch {
      return false;
    }
  })();
  return readlineProbe;
}

module.exports = { NODE, inOwnRealm, mtimeDate, readlineSplitsAsNode, statMtimes, systemError };
