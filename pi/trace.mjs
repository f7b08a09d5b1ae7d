// PI_SESSION_NATIVE_TRACE=1 (or =<file>): the register hook points pi at this module instead of
// index.mjs. Same exports; every SessionManager method (static and instance) and every free function
// is timed in place. At exit, a table goes to stderr (or JSON to <file>):
//   calls   outermost calls (a method that calls another method counts once, for itself)
//   nested  calls made from inside another traced call
//   ms      wall time of the outermost calls, callbacks included
//   cb ms   time spent in callbacks passed in (list()'s onProgress: pi's picker, not ours)
//   size    for array results: the mean length
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const cjs = require("../index.js");

const stats = new Map();
let depth = 0;
const t0 = performance.now();
const stat = (name) => {
  let s = stats.get(name);
  if (!s) stats.set(name, (s = { calls: 0, nested: 0, ms: 0, cbMs: 0, max: 0, items: 0, arrays: 0, first: null }));
  return s;
};

function wrapCallback(fn, s) {
  return function traced(...args) {
    const c0 = performance.now();
    try {
      return fn.apply(this, args);
    } finally {
      s.cbMs += performance.now() - c0;
    }
  };
}

function timed(name, fn) {
  const wrapped = function (...args) {
    const s = stat(name);
    if (depth > 0) {
      s.nested++;
      return fn.apply(this, args);
    }
    for (let i = 0; i < args.length; i++) if (typeof args[i] === "function") args[i] = wrapCallback(args[i], s);
    depth++;
    const c0 = performance.now();
    let result;
    try {
      result = fn.apply(this, args);
    } finally {
      depth--;
    }
    const done = (value) => {
      const ms = performance.now() - c0;
      s.calls++;
      s.ms += ms;
      if (ms > s.max) s.max = ms;
      if (s.first === null) s.first = ms;
      if (Array.isArray(value)) {
        s.arrays++;
        s.items += value.length;
      }
      return value;
    };
    if (result && typeof result.then === "function") {
      return result.then(done, (e) => {
        done(undefined);
        throw e;
      });
    }
    return done(result);
  };
  Object.defineProperty(wrapped, "name", { value: fn.name });
  return wrapped;
}

const { SessionManager } = cjs;
for (const key of Object.getOwnPropertyNames(SessionManager)) {
  const d = Object.getOwnPropertyDescriptor(SessionManager, key);
  if (typeof d.value === "function" && key !== "prototype")
    SessionManager[key] = timed(`SessionManager.${key}`, d.value);
}
for (const key of Object.getOwnPropertyNames(SessionManager.prototype)) {
  const d = Object.getOwnPropertyDescriptor(SessionManager.prototype, key);
  if (key !== "constructor" && typeof d.value === "function") SessionManager.prototype[key] = timed(key, d.value);
}
const free = {};
for (const key of Object.keys(cjs))
  free[key] = typeof cjs[key] === "function" && key !== "SessionManager" ? timed(`fn ${key}`, cjs[key]) : cjs[key];

function report() {
  const rows = [...stats.entries()].filter(([, s]) => s.calls || s.nested).sort((a, b) => b[1].ms - a[1].ms);
  const total = rows.reduce((n, [, s]) => n + s.ms, 0);
  const target = process.env.PI_SESSION_NATIVE_TRACE;
  if (target && target !== "1") {
    const out = { wallMs: performance.now() - t0, totalMs: total, methods: Object.fromEntries(rows) };
    writeFileSync(target, `${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  const f = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  const lines = [
    `pi-session-native trace: ${rows.length} methods, ${f(total)} ms in SessionManager calls (process ${f(performance.now() - t0)} ms)`,
  ];
  lines.push(
    `${"method".padEnd(34)} ${"calls".padStart(6)} ${"nested".padStart(6)} ${"ms".padStart(9)} ${"first".padStart(8)} ${"max".padStart(8)} ${"cb ms".padStart(8)} ${"size".padStart(8)}`,
  );
  for (const [name, s] of rows) {
    const size = s.arrays ? f(s.items / s.arrays) : "";
    lines.push(
      `${name.padEnd(34)} ${String(s.calls).padStart(6)} ${String(s.nested).padStart(6)} ${f(s.ms).padStart(9)} ${f(s.first ?? 0).padStart(8)} ${f(s.max).padStart(8)} ${(s.cbMs ? f(s.cbMs) : "").padStart(8)} ${size.padStart(8)}`,
    );
  }
  process.stderr.write(`${lines.join("\n")}\n`);
}
process.on("exit", report);

// An ES module's export list is written out: index.mjs's, which free-functions.test.mjs checks.
export const {
  CURRENT_SESSION_VERSION,
  assertValidSessionId,
  buildContextEntries,
  buildSessionContext,
  buildSessionProjection,
  findMostRecentSession,
  getDefaultSessionDir,
  getLatestCompactionEntry,
  loadEntriesFromFile,
  migrateSessionEntries,
  parseSessionEntries,
  projectContextEntry,
  sessionEntryToContextMessages,
} = free;
export { SessionManager };
export default { ...free, SessionManager };
