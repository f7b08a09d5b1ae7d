"use strict";
// The answers of the JS runtime, not of ECMAScript (docs/fidelity.md, "Under Bun and other runtimes"):
// Node's are known, often given by the core; other runtimes' are asked.

const { readdirSync } = require("node:fs");
const binding = require("../binding.js");

/** Node itself: V8 with libuv's fs. Bun reports a Node version too, and a V8 one. */
const NODE = typeof process.versions.bun !== "string" && typeof process.versions.deno !== "string";

const NODE_ERROR_KEYS = ["errno", "code", "syscall", "path"];
let template;

/** The constructor (under a vm context, the outer realm's) and own-key order of this runtime's fs errors. */
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

/** An error the addon threw (in its realm), as one of this module's realm, where the reference throws. */
function inOwnRealm(err) {
  if (err instanceof Error) return err;
  const out = new (OWN_ERRORS[err.name] ?? Error)(err.message);
  for (const k of Object.keys(err)) out[k] = err[k];
  return out;
}

// Line ends of every kind, and a \r\n split between two chunks.
const PROBE_CHUNKS = ["a\u2028b\u2029c\u0085d\ve\ff\rg\r", "\nh\r\ri\n\nj", "\rk"];
const BUN_LINES = ["a", "b", "c\u0085d\ve\ff", "g", "h", "", "i", "", "j", "k"];
let readlineProbe;

/**
 * Whether this runtime's readline also ends lines at U+2028 and U+2029, as Bun's does (never asked
 * on Node). One that splits like neither is taken for Node's.
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

// `localeCompare` of file names without ICU's collator (6-32 ms to build): V8 compares printable ASCII
// under English locales by fixed weights (`TryFastCompareStrings`), which the core holds.

const PRINTABLE = /^[\x20-\x7e]*$/;

/** Whether the default locale is English: ICU on Linux takes the first of LC_ALL, LC_MESSAGES, LANG set. */
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
