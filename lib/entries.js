"use strict";
// The entry objects of one session (the reference's `fileEntries`) and the core index
// behind them. The core holds each loaded line and a skeleton of every entry; this keeps
// one JS object per position, parsed from its line on first use, so that `getEntry(id)`
// returns the same object every time (the reference's object identity, which extensions
// may rely on), or the object an append built.

const { randomUUID } = require("node:crypto");
const { binding, call, shortId } = require("./native.js");
const { PendingSkeletons, keyOf } = require("./keys.js");

const { NativeSession } = binding;

/**
 * Puts the strings carried beside a piece of lines back into the parsed objects:
 * `patchText` lists `line, path, which, start, end` per string; the string is
 * `start..end` of the Latin-1 text (`which` 0) or the UTF-16 one (1), as a slice that
 * shares its characters, or `mapped[start]` (`which` 2: a string whose bytes stay in the
 * mapped session file). Each path ends at the `""` that `JSON.parse` made in its place, in
 * an object without duplicate keys, so the result is the object of the original line.
 */
function putBack(objs, missing, first, [, latin1, utf16, patchText, mapped]) {
  const p = JSON.parse(`[${patchText}]`);
  for (let j = 0; j < p.length; j += 5) {
    let o = objs[missing[first + p[j]]];
    const path = p[j + 1];
    const last = path.length - 1;
    for (let d = 0; d < last; d++) o = o[path[d]];
    const which = p[j + 2];
    o[path[last]] = which === 2 ? mapped[p[j + 3]] : (which === 0 ? latin1 : utf16).slice(p[j + 3], p[j + 4]);
  }
}

class Entries {
  #native = new NativeSession();
  /** Items `[0, #indexed)` are in the core; later ones are JS objects not yet indexed (see `core()`). */
  #indexed = 0;
  /** One slot per item, filled lazily for loaded lines. */
  #objs = [];
  /**
   * The ids while every entry is a JS object (new, in-memory and unflushed sessions): ids
   * are then generated and checked here, as the reference does. Null once the core is the
   * authority (a loaded or written file).
   */
  #jsIds = new Set();

  /** The core, with every pending skeleton pushed. */
  core() {
    const objs = this.#objs;
    if (this.#indexed < objs.length) {
      const pending = new PendingSkeletons();
      for (let i = this.#indexed; i < objs.length; i++) pending.add(objs[i]);
      pending.flushInto(this.#native);
      this.#indexed = objs.length;
    }
    return this.#native;
  }

  /** Lets the core close the session file before it is rewritten (`Session::release_file`). */
  releaseFile() {
    this.#native.releaseFile();
  }

  get length() {
    return this.#objs.length;
  }

  /** The number of non-header entries (`byId.size`). */
  get entryCount() {
    return this.#jsIds !== null ? this.#jsIds.size : this.core().entryCount();
  }

  /** Whether the object at `pos` was parsed or built already (its line may differ from it). */
  isMaterialised(pos) {
    return this.#objs[pos] !== undefined;
  }

  /** The object at a position, parsed from its line on first use. */
  at(pos) {
    let e = this.#objs[pos];
    if (e === undefined) {
      e = this.#parse(pos);
      this.#objs[pos] = e;
    }
    return e;
  }

  /** A new object from the line at `pos` (one whose strings stay in the file comes as a piece). */
  #parse(pos) {
    const text = call(() => this.#native.line(pos));
    if (text !== null) return JSON.parse(text);
    const got = {};
    this.#parseInto(got, [pos]);
    return got[pos];
  }

  /** Objects at many positions; unparsed lines cross from the core in pieces. */
  atMany(positions) {
    const objs = this.#objs;
    const out = new Array(positions.length);
    let missing;
    for (let i = 0; i < positions.length; i++) {
      const e = objs[positions[i]];
      if (e === undefined) (missing ??= []).push(positions[i]);
      out[i] = e;
    }
    if (missing === undefined) return out;
    // One line per entry, as ASCII (non-ASCII characters escaped): taking it as a one-byte
    // string is a plain copy, and V8 parses many small texts faster than one big array.
    // A large text comes in pieces that the core reads and escapes on another thread
    // while this one parses the pieces before.
    // Long escaped strings come out of the lines already decoded and are put back at
    // their paths: V8 copies a string far faster than `JSON.parse` decodes one.
    this.#parseInto(objs, missing);
    for (let i = 0; i < positions.length; i++) out[i] = objs[positions[i]];
    return out;
  }

  /** Sets `objs[positions[i]]` to the object parsed from each position's line. */
  #parseInto(objs, positions) {
    const pieces = call(() => this.#native.linesAsciiPieces(Uint32Array.from(positions)));
    let k = 0;
    for (let piece; (piece = call(() => pieces.next())) !== null; ) {
      const first = k;
      const lines = piece[0].split("\n");
      for (let i = 0; i < lines.length; i++) objs[positions[k++]] = JSON.parse(lines[i]);
      if (piece[3] !== null) putBack(objs, positions, first, piece);
    }
    if (k !== positions.length)
      throw new Error(`pi-session-native internal error: ${positions.length - k} lines not read`);
  }

  /**
   * `out` (the entries of `getEntries()`) as the reference's `fileEntries.filter(…)` makes
   * it: an array of the realm and species of `fileEntries`, which after `inMemory(cwd,
   * options, entries)` is the caller's own array (from another realm under Vitest's
   * vmThreads or Jest, where `structuredClone` gives the outer realm's objects).
   */
  likeFileEntries(out) {
    const objs = this.#objs;
    if (Object.getPrototypeOf(objs) === Array.prototype || !Array.isArray(objs)) return out;
    const copy = objs.filter(() => false);
    for (const entry of out) copy.push(entry);
    return copy;
  }

  /** Every object (`fileEntries`). */
  all() {
    const n = this.#objs.length;
    const all = new Uint32Array(n);
    for (let i = 0; i < n; i++) all[i] = i;
    return this.atMany(all);
  }

  /** `byId.has(id)`. */
  has(id) {
    return this.#jsIds !== null ? this.#jsIds.has(id) : this.core().lookup(keyOf(id)) >= 0;
  }

  /** `generateId(byId)`: checked by the core's index once it is the authority, else here. */
  newId() {
    const ids = this.#jsIds;
    if (ids === null) return this.core().newId();
    for (let i = 0; i < 100; i++) {
      const candidate = shortId();
      if (!ids.has(candidate)) return candidate;
    }
    return randomUUID();
  }

  /** The id of the last non-header entry (`_buildIndex`'s leaf), or null. */
  lastEntryId() {
    const last = this.core().lastEntry();
    if (last < 0) return null;
    // Read the id without caching the object: entries nobody has asked for stay unparsed,
    // which keeps `createBranchedSession`'s byte path available for them.
    const known = this.#objs[last];
    return (known !== undefined ? known : this.#parse(last)).id;
  }

  /** Adds an entry the facade built (indexed when the core is next asked). */
  push(entry) {
    this.#objs.push(entry);
    this.#jsIds?.add(entry.id);
  }

  /** Takes back the last `push` (its write failed). */
  pop() {
    const entry = this.#objs.pop();
    if (this.#indexed > this.#objs.length) {
      this.#native.pop();
      this.#indexed--;
    }
    this.#jsIds?.delete(entry.id);
  }

  /** Adds an entry the core indexed itself (`commitLine`), after `count - 1` items. */
  pushIndexed(entry, count) {
    this.padTo(count - 1);
    this.#objs.push(entry);
    this.#indexed = this.#objs.length;
  }

  /** Pads with unparsed slots for entries the core read from other writers. */
  padTo(count) {
    while (this.#objs.length < count) this.#objs.push(undefined);
    this.#indexed = count;
  }

  /** From now on the core checks ids (the session's file exists). */
  coreTakesIds() {
    this.#jsIds = null;
  }

  /** Replaces everything with JS objects (`_buildIndex`); returns the leaf id. */
  reset(entries) {
    const ids = new Set();
    let leafId = null;
    for (const entry of entries) {
      // `_buildIndex` reads each entry's type first: a null entry throws the same TypeError
      // (named `entry` as there: JavaScriptCore's text quotes the expression).
      if (entry.type === "session") continue;
      ids.add(entry.id);
      leafId = entry.id;
    }
    this.#native = new NativeSession();
    this.#indexed = 0;
    this.#jsIds = ids;
    this.#objs = entries;
    return leafId;
  }

  /**
   * Takes a core session as the whole state, with `objs` the objects known for its items
   * (the rest are parsed from their lines when asked).
   */
  adopt(native, objs = new Array(native.count())) {
    this.#native = native;
    this.#indexed = objs.length;
    this.#jsIds = null;
    this.#objs = objs;
  }
}

module.exports = { Entries };
