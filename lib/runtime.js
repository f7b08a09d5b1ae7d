"use strict";
// The answers that come from the JS runtime, not from ECMAScript: Node's are known (and given
// fast, often by the core), any other runtime's (Bun, Deno) are asked of it. On Node (V8, libuv):
// - `localeCompare` of printable ASCII under an English default locale is V8's weight table
//   (below; the core holds it);
// - `readdirSync` lists names sorted by bytes (libuv), the order the core's discovery keeps for
//   equal mtimes (`platform::jsonl_stats`); Bun lists in the directory's own order (the core's
//   `raw` order); both decode names that are not UTF-8 with U+FFFD;
// - `stats.mtime` is `new Date(Math.round(mtimeMs))` (Bun truncates; listing.js);
// - fs errors have the own keys errno, code, syscall, path in that order (their realm is asked
//   everywhere: under a vm context it is not the caller's);
// - readline splits lines only at \n, \r\n and \r (Bun's also at U+2028 and U+2029: the core
//   scans so when told, `unicodeLineBreaks`).

const { readdirSync } = require("node:fs");
// The loader itself: native.js, which converts the addon's errors, asks this file.
const binding = require("../binding.js");

/** Node itself: V8 with libuv's fs. Bun reports a Node version too, and a V8 one. */
const NODE = typeof process.versions.bun !== "string" && typeof process.versions.deno !== "string";

const NODE_ERROR_KEYS = ["errno", "code", "syscall", "path"];
let template;

/**
 * The constructor (under a vm context, Vitest's vmThreads or Jest, fs errors come from the outer
 * realm) and own-key order of an fs error this runtime throws.
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
 * An error the addon threw, as one of this module's realm: N-API makes it in the addon's realm,
 * which under a vm context is not the one the facade (and the reference) throw in.
 */
function inOwnRealm(err) {
  if (err instanceof Error) return err;
  const out = new (OWN_ERRORS[err.name] ?? Error)(err.message);
  for (const k of Object.keys(err)) out[k] = err[k];
  return out;
}

// Line ends of every kind, and a \r\n split between two chunks (crlfDelay: Infinity).
const PROBE_CHUNKS = ["a\u2028b\u2029c\u0085d\ve\ff\rg\r", "\nh\r\ri\n\nj", "\rk"];
const BUN_LINES = ["a", "b", "c\u0085d\ve\ff", "g", "h", "", "i", "", "j", "k"];
let readlineProbe;

/**
 * Whether this runtime's readline also ends lines at U+2028 and U+2029, as Bun's does (asked
 * once; never on Node). One that splits like neither Node's nor Bun's is taken for Node's: a
 * file with such other line ends would be listed as on Node, not as the reference lists it there.
 */
function unicodeLineBreaks() {
  if (NODE) return Promise.resolve(false);
  readlineProbe ??= (async () => {
    try {
      const { createInterface } = require("node:readline");
      const { Readable } = require("node:stream");
      const lines = [];
      const rl = createInterface({ input: Readable.from(PROBE_CHUNKS), crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of rl) lines.push(line);
      return JSON.stringify(lines) === JSON.stringify(BUN_LINES);
    } catch {
      return false;
    }
  })();
  return readlineProbe;
}

// `localeCompare` order of file names without ICU: building ICU's collator costs 6-32 ms, most of
// a listing served by the listing index. V8 compares printable ASCII under English default
// locales by fixed UCA weights (`TryFastCompareStrings` in src/objects/intl-objects.cc), which the
// core holds to sort a folder (`discovery::jsonl_names_descending`) or compare two names
// (`collateNames`); here is decided whether it may.

const PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * Whether the default locale's `localeCompare` of printable ASCII is V8's weight table: on Linux
 * ICU takes the first of LC_ALL, LC_MESSAGES, LANG that is set (even empty); "C", "POSIX" or
 * none mean en-US; `--icu-locale` overrides them.
 */
function englishDefault(env = process.env, platform = process.platform, argv = process.execArgv) {
  if (platform !== "linux") return false;
  const flags = `${argv.join(" ")} ${env.NODE_OPTIONS ?? ""}`;
  if (flags.includes("--icu-locale")) return false;
  const id = env.LC_ALL ?? env.LC_MESSAGES ?? env.LANG;
  return id === undefined || /^(?:C|POSIX|C\.[\w-]+|en(?:_[A-Z]{2})?(?:\.[\w-]+)?)$/.test(id);
}

let english;

/** Whether `b.localeCompare(a)` order of printable ASCII names is known without ICU (V8's table, on Node). */
function asciiOrderKnown() {
  english ??= NODE && englishDefault();
  return english;
}

/** `a.localeCompare(b)`, as a sign (for the rare ties of `listAll`'s sort). */
function compare(a, b) {
  if (!asciiOrderKnown() || !PRINTABLE.test(a) || !PRINTABLE.test(b)) return a.localeCompare(b);
  return binding.collateNames(a, b);
}

module.exports = {
  NODE,
  asciiOrderKnown,
  compare,
  englishDefault,
  inOwnRealm,
  systemError,
  unicodeLineBreaks,
};
