"use strict";
// Puts pi on this package's SessionManager by replacing the statics of pi's own class, as
// `uvloop.install()` replaces asyncio's loop. One implementation, two callers:
//   - the pi package's extension (pi/extension.mjs): every static by default (`all`), so the
//     in-session /resume picker lists natively and resuming, /fork and clone run natively; `lists`
//     swaps only `list` and `listAll`.
//   - `pi-native` (pi/launcher.js): every static, before pi's `main` runs, so the startup flows
//     (-r, -c, --session, --fork, the first session) are reached too.
// pi's code never tests `instanceof SessionManager` and nothing outside its session module reads the
// class's internals, so instances of ours serve pi; the free functions that pi's modules import
// stay pi's (ES module bindings cannot be replaced from outside).
//
// Whether pi may be swapped at all is the gate's decision (pi/gate.js: the fingerprint of the
// session module pi runs against pi/verified.json); install() takes the profile the gate chose.

const { appendFileSync, readFileSync } = require("node:fs");
const { join } = require("node:path");
const { setting } = require("./env.js");

/** On pi's class once swapped: { mode, names, by, originals }. */
const SWAPPED = Symbol.for("pi-session-native.swap");
/** On this package's own class (lib/session-manager.js): pi already runs on our module. */
const OURS = Symbol.for("pi-session-native.class");
/** Where the listing looks for a partial-list cadence (lib/listing.js). */
const PARTIAL_LISTS = Symbol.for("pi-session-native.partialLists");

const LISTS = ["list", "listAll"];
const ALL = ["create", "open", "continueRecent", "inMemory", "forkFrom", "findById", "list", "listAll"];
/** PI_SESSION_NATIVE_SWAP (or settings.json `piSessionNative.swap`) -> the statics swapped. */
const MODES = { off: [], lists: LISTS, all: ALL };
const ENV = "PI_SESSION_NATIVE_SWAP";
const SETTING = "piSessionNative";

/**
 * PI_SESSION_NATIVE_LOG=<file>: one JSON line per decision ({event: "swap" | "skip", ...}) and per
 * call of a swapped static ({event: "call", name}), for checking what runs natively in pi's flows.
 */
function log(record, env = process.env) {
  const file = env.PI_SESSION_NATIVE_LOG;
  if (!file) return;
  try {
    appendFileSync(file, `${JSON.stringify({ pid: process.pid, ...record })}\n`);
  } catch {
    // a log that cannot be written must not break pi
  }
}

/** The function installed for `name`: ours, or a logging wrapper of it under PI_SESSION_NATIVE_LOG. */
function replacement(ours, name) {
  const fn = ours[name];
  if (!process.env.PI_SESSION_NATIVE_LOG) return fn;
  return {
    [name](...args) {
      log({ event: "call", name });
      return fn.apply(ours, args);
    },
  }[name];
}

/** pi's agent dir, as pi's getAgentDir(): $PI_CODING_AGENT_DIR (normalised, ~ expanded), else ~/.pi/agent. */
const agentDir = (env = process.env) => require("../lib/paths.js").getAgentDir(env);

/**
 * The swap mode: $PI_SESSION_NATIVE_SWAP, else `piSessionNative.swap` in pi's global settings.json,
 * else `fallback`. Returns { mode, from } or, for a value that is not a mode, { error }.
 */
function chooseMode(fallback, { env = process.env, dir = agentDir(env) } = {}) {
  const check = (value, from) =>
    Object.hasOwn(MODES, value)
      ? { mode: value, from }
      : { error: `${from} is ${JSON.stringify(value)}, not one of ${Object.keys(MODES).join(", ")}` };
  if (env[ENV] !== undefined && env[ENV] !== "") return check(env[ENV], ENV);
  let settings;
  try {
    settings = JSON.parse(readFileSync(join(dir, "settings.json"), "utf8").replace(/^\uFEFF/, ""));
  } catch {
    settings = undefined; // no settings file, or one pi itself reports
  }
  const value = settings?.[SETTING]?.swap;
  if (value !== undefined) return check(value, `${SETTING}.swap in ${join(dir, "settings.json")}`);
  return { mode: fallback, from: "default" };
}

/** What was swapped on pi's class, or null. */
const swapped = (cls) => (typeof cls === "function" && Object.hasOwn(cls, SWAPPED) ? cls[SWAPPED] : null);

/** Whether `cls` is this package's own class (pi loaded our module: `--import pi-session-native/register`). */
const isOurs = (cls) => typeof cls === "function" && cls[OURS] === true;

/**
 * Replace the statics of `mode` on pi's class `cls` with those of our class (`loadOurs()` returns
 * it). One swap per class: a second call (pi re-runs extension factories on /resume, /new, /fork and
 * /reload; pi-native and the extension in one process) changes nothing and returns the first one's
 * record. `profile` is the one the gate chose; it is in force before our module loads, which fixes
 * its export list then (lib/profile.js). Returns { swapped: record, now: whether this call did it }.
 */
function install(cls, loadOurs, mode, by, profile) {
  const before = swapped(cls);
  if (before) return { swapped: before, now: false };
  if (profile) require("../lib/profile.js").use(profile, by);
  const ours = loadOurs();
  const names = MODES[mode];
  const originals = {};
  for (const name of names) {
    originals[name] = cls[name];
    Object.defineProperty(cls, name, {
      value: replacement(ours, name),
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }
  if (names.includes("list")) usePartialListsByTime();
  const record = Object.freeze({
    mode,
    names: Object.freeze([...names]),
    by,
    profile: profile ?? null,
    originals: Object.freeze(originals),
  });
  Object.defineProperty(cls, SWAPPED, { value: record, configurable: true });
  log({ event: "swap", by, mode, names, profile: profile ?? null });
  return { swapped: record, now: true };
}

/**
 * pi's /resume picker rebuilds its whole session tree on every partial list, so one per 10 files
 * grows as n²/10: a partial list for the first file, then at most one per 100 ms, and for the last
 * (pi-native's one deviation; PI_SESSION_NATIVE_PARTIAL_LISTS=files keeps pi's cadence).
 */
function usePartialListsByTime() {
  if (setting("PI_SESSION_NATIVE_PARTIAL_LISTS") === "files") return;
  globalThis[PARTIAL_LISTS] = () => {
    let last = Number.NEGATIVE_INFINITY;
    return (loaded, total, first) => {
      const now = performance.now();
      if (!(first || loaded === total || now - last >= 100)) return false;
      last = now;
      return true;
    };
  };
}

/** Undo install(): pi's own statics back (for tests and embedders; pi itself never calls it). */
function uninstall(cls) {
  const record = swapped(cls);
  if (!record) return false;
  for (const [name, fn] of Object.entries(record.originals))
    Object.defineProperty(cls, name, { value: fn, writable: true, configurable: true, enumerable: false });
  delete cls[SWAPPED];
  return true;
}

module.exports = {
  ALL,
  ENV,
  LISTS,
  MODES,
  OURS,
  SETTING,
  SWAPPED,
  agentDir,
  chooseMode,
  install,
  isOurs,
  log,
  swapped,
  uninstall,
  usePartialListsByTime,
};
