// Normalisation of the random parts of session data, and a strict deep comparator.
//
// Random parts (and only those) are replaced so two runs compare equal:
//   - entry ids (8 hex chars)              -> <ID1>, <ID2>, ...   by order of first appearance
//   - UUIDs (session ids, fallback ids)     -> <UUID1>, ...       by order of first appearance
//   - ISO timestamps generated "now"        -> <NOW> or <NOW@k>   (k: the operation that generated it, see beginEpoch)
//   - file-name timestamps generated "now"  -> <FNOW>/<FNOW@k>    (`2026-01-02T03-04-05-678Z`)
//   - millisecond numbers generated "now"   -> "<NOWMS>"/"<NOWMS@k>" (numbers and 13-digit runs in file text)
//   - temp-dir roots                        -> <ROOT> (or the label given to addRoot)
// Ids map by first appearance, so structure (which id is whose parent) is still compared.
// Nothing the implementation controls is normalised: key order, undefined-valued keys, -0, NaN, error
// messages, prototypes and extensibility all survive into the normalised copy and are compared.

import { inspect } from "node:util";

/** "Now" window: anything generated while this process runs. Payload timestamps in tests are fixed and old. */
const WINDOW_START = Date.now() - 60_000;
const windowEnd = () => Date.now() + 60_000;
const inWindow = (ms) => ms >= WINDOW_START && ms <= windowEnd();

/** Marker for a Date in a normalised copy (holds the normalised getTime()). */
export class DateBox {
  constructor(time) {
    this.time = time;
  }
}

/** Marker for a thrown error in a normalised copy. */
export class ErrorBox {
  constructor(fields) {
    Object.assign(this, fields);
  }
}

/** Symbol under which a normalised object records a non-default prototype or non-extensibility. */
export const SHAPE = Symbol("shape");

const ISO = String.raw`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z`;
const FILE_TS = String.raw`\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z`;
const UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
// In JS strings an id may be the whole string or a word inside an error message.
const VALUE_RE = new RegExp(`(${ISO})|(${FILE_TS})|(${UUID})|(?<![0-9A-Za-z])([0-9a-f]{8})(?![0-9A-Za-z])`, "g");
// In file text an id is always a JSON string; 13-digit runs may be millisecond stamps.
const TEXT_RE = new RegExp(
  `(${ISO})|(${FILE_TS})|(${UUID})|(?<=")([0-9a-f]{8})(?=")|(?<![\\w.])(\\d{13})(?![\\w.])`,
  "g",
);

function fileTsToMs(s) {
  // 2026-01-02T03-04-05-678Z -> 2026-01-02T03:04:05.678Z
  const iso = `${s.slice(0, 13)}:${s.slice(14, 16)}:${s.slice(17, 19)}.${s.slice(20)}`;
  return Date.parse(iso);
}

const LONG = 256;

export class Normalizer {
  constructor() {
    this.ids = new Map();
    this.uuids = new Map();
    this.roots = [];
    this.cache = new Map();
  }

  /** Replace every occurrence of `path` by `label` (longest roots first). */
  addRoot(path, label = "<ROOT>") {
    this.roots.push([path, label]);
    // File text holds paths JSON-escaped: a Windows path's backslashes are doubled there.
    const escaped = JSON.stringify(path).slice(1, -1);
    if (escaped !== path) this.roots.push([escaped, label]);
    this.roots.sort((a, b) => b[0].length - a[0].length);
    this.cache.clear();
    this.lineCache?.clear();
    return this;
  }

  _id(raw) {
    let v = this.ids.get(raw);
    if (!v) this.ids.set(raw, (v = `<ID${this.ids.size + 1}>`));
    return v;
  }

  _uuid(raw) {
    let v = this.uuids.get(raw);
    if (!v) this.uuids.set(raw, (v = `<UUID${this.uuids.size + 1}>`));
    return v;
  }

  _roots(s) {
    for (const [path, label] of this.roots) if (s.includes(path)) s = s.split(path).join(label);
    return s;
  }

  /**
   * Epochs: the random-ops harness calls beginEpoch() before each operation (waiting for the clock to tick, so
   * epochs never share a millisecond). A "now" stamp then normalises to the operation that generated it
   * (<NOW@7>), so a timestamp that should have been copied from an earlier entry but was freshly generated (or the
   * reverse) is caught. Without epochs every "now" stamp is plain <NOW>.
   */
  beginEpoch() {
    this.epochs ??= [];
    const last = this.lastMs ?? 0;
    let now = Date.now();
    while (now <= last) now = Date.now();
    this.epochs.push(now);
  }

  endEpoch() {
    this.lastMs = Date.now();
  }

  _when(ms) {
    const e = this.epochs;
    if (!e?.length) return "";
    if (ms < e[0]) return "@pre";
    let lo = 0;
    let hi = e.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (e[mid] <= ms) lo = mid;
      else hi = mid - 1;
    }
    return `@${lo}`;
  }

  _replace(s, re) {
    return s.replace(re, (m, iso, fts, uuid, id, ms) => {
      if (iso) {
        const t = Date.parse(iso);
        return inWindow(t) ? `<NOW${this._when(t)}>` : iso;
      }
      if (fts) {
        const t = fileTsToMs(fts);
        return inWindow(t) ? `<FNOW${this._when(t)}>` : fts;
      }
      if (uuid) return this._uuid(uuid);
      if (id) return this._id(id);
      if (ms) return inWindow(Number(ms)) ? `<NOWMS${this._when(Number(ms))}>` : ms;
      return m;
    });
  }

  /** Normalise a JS string value (ids as whole strings or words). Cached: a normalised string never changes. */
  str(s) {
    if (s.length >= LONG) {
      const hit = this.cache.get(s);
      if (hit !== undefined) return hit;
      const out = this._replace(this._roots(s), VALUE_RE);
      this.cache.set(s, out);
      return out;
    }
    return this._replace(this._roots(s), VALUE_RE);
  }

  /** Normalise raw file text (decode files as latin1 so every byte survives). Long lines are cached. */
  text(s) {
    if (s.length < 64 * 1024) return this._replace(this._roots(s), TEXT_RE);
    this.lineCache ??= new Map();
    const lines = s.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (line.length < LONG) {
        lines[i] = this._replace(this._roots(line), TEXT_RE);
        continue;
      }
      let hit = this.lineCache.get(line);
      if (hit === undefined) this.lineCache.set(line, (hit = this._replace(this._roots(line), TEXT_RE)));
      lines[i] = hit;
    }
    return lines.join("\n");
  }

  num(n) {
    return Number.isInteger(n) && inWindow(n) ? `<NOWMS${this._when(n)}>` : n;
  }

  /**
   * Deep, normalised copy of a value. Iterative (handles 100k-deep nesting). Keeps key order, undefined-valued keys,
   * -0 and NaN; Dates become DateBox, thrown errors ErrorBox, functions "<function name>"; a non-plain prototype or a
   * non-extensible object is recorded under the SHAPE symbol.
   */
  value(input) {
    const holder = { v: undefined };
    const stack = [[input, holder, "v"]];
    // An object met again within one value (an entry in getEntries() and in getTree() and in the context...)
    // reuses its copy: the id mapping is append-only, so normalising it again would give the same result.
    const memo = new Map();
    let nodes = 0;
    while (stack.length) {
      const [v, parent, key] = stack.pop();
      if (++nodes > 20_000_000) throw new Error("normalize: more than 20M nodes (a cyclic value?)");
      if (v !== null && typeof v === "object") {
        const hit = memo.get(v);
        if (hit !== undefined) {
          parent[key] = hit;
          continue;
        }
        parent[key] = this._leaf(v, stack);
        memo.set(v, parent[key]);
      } else parent[key] = this._leaf(v, stack);
    }
    return holder.v;
  }

  _leaf(v, stack) {
    switch (typeof v) {
      case "string":
        return this.str(v);
      case "number":
        return this.num(v);
      case "function":
        return `<function ${v.name}>`;
      case "bigint":
        return `<bigint ${v}>`;
      case "symbol":
        return `<symbol ${String(v.description)}>`;
      case "object":
        break;
      default:
        return v; // undefined, boolean
    }
    if (v === null) return null;
    if (v instanceof Date) return new DateBox(this.num(v.getTime()));
    if (v instanceof ErrorBox) return v;
    // A thrown error inside a result (`{ threw: error }`): compared by name and message too.
    if (v instanceof Error) return this.error(v);
    if (isPromise(v)) return "<promise>";
    if (Array.isArray(v)) {
      const out = new Array(v.length);
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], out, i]);
      const shape = shapeOf(v, Array.prototype);
      if (shape) out[SHAPE] = shape;
      return out;
    }
    if (v instanceof Map) {
      const out = [];
      out[SHAPE] = "Map";
      const pairs = [...v.entries()];
      for (let i = pairs.length - 1; i >= 0; i--) stack.push([pairs[i], out, i]);
      return out;
    }
    const out = {};
    const keys = Object.keys(v);
    for (const k of keys) out[k] = undefined; // fix the key order first; children fill in later
    for (let i = keys.length - 1; i >= 0; i--) stack.push([v[keys[i]], out, keys[i]]);
    const shape = shapeOf(v, Object.prototype);
    if (shape) out[SHAPE] = shape;
    return out;
  }

  /** Normalise a thrown value into an ErrorBox (name, message, and code when present). */
  error(e) {
    if (!(e instanceof Error) && (typeof e !== "object" || e === null)) {
      return new ErrorBox({ nonError: typeof e, message: this.str(String(e)) });
    }
    const fields = {
      isError: e instanceof Error,
      name: e?.name,
      ctor: e?.constructor?.name,
      message: this.str(String(e?.message)),
    };
    if (e && "code" in e) fields.code = e.code;
    return new ErrorBox(fields);
  }
}

function shapeOf(v, expectedProto) {
  const proto = Object.getPrototypeOf(v);
  let shape = "";
  if (proto !== expectedProto) shape += proto === null ? "proto:null" : `proto:${proto?.constructor?.name ?? "?"}`;
  if (!Object.isExtensible(v)) shape += (shape ? "," : "") + (Object.isFrozen(v) ? "frozen" : "non-extensible");
  return shape;
}

export function isPromise(v) {
  return v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function";
}

// ---------------------------------------------------------------------------------------------------------------
// Deep comparison of normalised copies.
// ---------------------------------------------------------------------------------------------------------------

function kindOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (v instanceof DateBox) return "Date";
  if (v instanceof ErrorBox) return "Error";
  return typeof v;
}

/**
 * First difference between two normalised values, or null when equal. Checks: same kind, Object.is for numbers
 * (-0 !== 0, NaN === NaN), same own keys in the same order (undefined-valued keys must be present on both sides),
 * arrays element-wise, DateBox by time, ErrorBox by all fields, SHAPE markers. Iterative.
 * Returns { path, reason, a, b }.
 */
export function deepDiff(a, b, rootPath = "$") {
  const stack = [[a, b, rootPath]];
  while (stack.length) {
    const [x, y, path] = stack.pop();
    if (Object.is(x, y)) continue;
    const kx = kindOf(x);
    const ky = kindOf(y);
    if (kx !== ky) return { path, reason: `type ${kx} vs ${ky}`, a: x, b: y };
    if (kx === "Date") {
      if (!Object.is(x.time, y.time)) return { path, reason: "Date time differs", a: x, b: y };
      continue;
    }
    if (kx === "Error") {
      // `code` is compared only when the reference (left side) has one: napi adds a code to every error.
      for (const k of ["nonError", "isError", "name", "ctor", "message", ...("code" in x ? ["code"] : [])]) {
        if (!Object.is(x[k], y[k])) return { path: `${path}<error ${k}>`, reason: "thrown error differs", a: x, b: y };
      }
      continue;
    }
    if (kx !== "object" && kx !== "array") {
      // primitives that are not Object.is-equal
      return { path, reason: kx === "number" ? "number differs (Object.is)" : `${kx} differs`, a: x, b: y };
    }
    if ((x[SHAPE] ?? "") !== (y[SHAPE] ?? "")) {
      return { path, reason: `object shape ${x[SHAPE] || "plain"} vs ${y[SHAPE] || "plain"}`, a: x, b: y };
    }
    if (kx === "array") {
      if (x.length !== y.length) return { path, reason: `array length ${x.length} vs ${y.length}`, a: x, b: y };
      for (let i = x.length - 1; i >= 0; i--) stack.push([x[i], y[i], `${path}[${i}]`]);
      continue;
    }
    const kxs = Object.keys(x);
    const kys = Object.keys(y);
    if (kxs.length !== kys.length || kxs.some((k, i) => k !== kys[i])) {
      const same = new Set(kxs).size === kys.length && kys.every((k) => kxs.includes(k));
      return {
        path,
        reason: same ? `same keys, different order: [${kxs}] vs [${kys}]` : `different keys: [${kxs}] vs [${kys}]`,
        a: x,
        b: y,
      };
    }
    for (let i = kxs.length - 1; i >= 0; i--) {
      const k = kxs[i];
      stack.push([x[k], y[k], `${path}${/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`}`]);
    }
  }
  return null;
}

/** Short human-readable rendering of a value for failure messages. */
export function show(v, width = 400) {
  let s;
  if (typeof v === "string") s = JSON.stringify(v);
  else s = inspect(v, { depth: 4, maxArrayLength: 20, maxStringLength: 160, breakLength: Infinity, compact: true });
  return s.length > width ? `${s.slice(0, width)}… (${s.length} chars)` : s;
}

export function formatDiff(d, labels = ["ref", "ours"]) {
  if (!d) return "";
  if (
    typeof d.a === "string" &&
    typeof d.b === "string" &&
    (d.a.length > 200 || d.b.length > 200 || d.a.includes("\n"))
  ) {
    return `at ${d.path}: ${d.reason}\n${stringDiff(d.a, d.b, labels, /(^|\.)files[.[]/.test(d.path))}`;
  }
  return `at ${d.path}: ${d.reason}\n    ${labels[0]}: ${show(d.a)}\n    ${labels[1]}: ${show(d.b)}`;
}

/** Where two long strings (file contents) first differ: line number, and that line on both sides. */
export function stringDiff(a, b, labels, bytes) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const lineNo = a.slice(0, i).split("\n").length;
  const lineStart = a.lastIndexOf("\n", i - 1) + 1;
  const lineOf = (s) => {
    const end = s.indexOf("\n", i);
    return s.slice(lineStart, end < 0 ? s.length : end + 1);
  };
  // file text is latin1-decoded bytes; show it as UTF-8 for reading
  const render = (s) => {
    const text = bytes ? Buffer.from(s, "latin1").toString("utf8") : s;
    const col = bytes ? Buffer.from(a.slice(lineStart, i), "latin1").toString("utf8").length : i - lineStart;
    const from = Math.max(0, col - 150);
    const cut = text.slice(from, col + 250);
    return `${from > 0 ? "…" : ""}${JSON.stringify(cut)}${col + 250 < text.length ? "…" : ""}`;
  };
  return (
    `    first difference at char ${i}, line ${lineNo} (lengths ${a.length} vs ${b.length}${bytes ? " bytes" : ""})\n` +
    `    ${labels[0]}: ${render(lineOf(a))}\n    ${labels[1]}: ${render(lineOf(b))}`
  );
}

/**
 * Run fn(), returning { value } or { error } (the raw thrown value). Awaits thenables when `awaitResult` is set.
 */
export function capture(fn) {
  try {
    return { value: fn() };
  } catch (error) {
    return { error };
  }
}

export async function captureAsync(fn) {
  try {
    const value = fn();
    if (isPromise(value)) return { value: await value, wasPromise: true };
    return { value, wasPromise: false };
  } catch (error) {
    return { error };
  }
}

/** Normalise a capture() result into a comparable record. */
export function normCapture(norm, c) {
  if ("error" in c) return { threw: norm.error(c.error) };
  const out = { value: norm.value(c.value) };
  if ("wasPromise" in c) out.async = c.wasPromise;
  return out;
}
