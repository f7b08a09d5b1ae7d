"use strict";
// The entry objects of one session (`fileEntries`) over the core index: one object per position,
// parsed from its line on first use, so `getEntry(id)` keeps the reference's object identity.

const { binding, call } = require("./native.js");
const { PendingSkeletons, keyOf } = require("./keys.js");

const { NativeSession } = binding;

/** Ids the core reserves per call (`reserveIds`): a call per append would cost in-memory appends ~10%. */
const ID_BATCH = 256;

/**
 * Puts the long strings carried beside a piece back at their paths (`patchText`: `line, path,
 * which, start, end` each): a slice of the Latin-1 (`which` 0) or UTF-16 (1) text, or `mapped[start]`
 * (2: bytes that stay in the mapped file). V8 copies a string far faster than `JSON.parse` decodes it.
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
  /** Items `[0, #indexed)` are in the core; later ones are objects not indexed yet. */
  #indexed = 0;
  /** One slot per item, filled lazily for loaded lines. */
  #objs = [];
  /** Ids the core reserved for the next appends (`newId`), used in order from `#nextId`. */
  #ids = [];
  #nextId = 0;
  /** Whether objects not indexed yet carry ids the core never saw (handed in, not appended). */
  #foreign = false;

  /**
   * The JSON lines of the objects at `positions`, which the core asks for when it writes the whole
   * session again (the file was deleted or moved away while open): the exact `JSON.stringify` bytes
   * of objects that only JS holds.
   */
  heldLines = (positions) => Array.from(positions, (p) => JSON.stringify(this.at(p)));

  /** The core, with every pending skeleton pushed. */
  core() {
    const objs = this.#objs;
    if (this.#indexed < objs.length) {
      const pending = new PendingSkeletons();
      for (let i = this.#indexed; i < objs.length; i++) pending.add(objs[i]);
      pending.flushInto(this.#native);
      this.#indexed = objs.length;
    }
    this.#foreign = false;
    return this.#native;
  }

  /** Lets the core close the file before it is rewritten (Windows refuses otherwise). */
  releaseFile() {
    this.#native.releaseFile();
  }

  get length() {
    return this.#objs.length;
  }

  /** The number of non-header entries (`byId.size`). */
  get entryCount() {
    return this.core().entryCount();
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

  /** A new object from the line at `pos`. */
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
    this.#parseInto(objs, missing);
    for (let i = 0; i < positions.length; i++) out[i] = objs[positions[i]];
    return out;
  }

  /**
   * Sets `objs[positions[i]]` to the object of each line. Lines come as ASCII pieces (a one-byte
   * string is a plain copy; V8 parses many small texts faster than one array), escaped by the
   * core on another thread while this one parses the pieces before.
   */
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
   * `out` as `fileEntries.filter(…)` makes it: of the realm and species of `fileEntries`, which after
   * `inMemory(cwd, options, entries)` is the caller's array (another realm under Jest or vmThreads).
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
    return this.core().lookup(keyOf(id)) >= 0;
  }

  /**
   * `generateId(byId)`, made by the core (`ids.rs`) against its index. Ids come reserved in
   * batches; entries appended since need no indexing first, as the core knows their ids.
   */
  newId() {
    if (this.#nextId === this.#ids.length) {
      this.#ids = (this.#foreign ? this.core() : this.#native).reserveIds(ID_BATCH).split(" ");
      this.#nextId = 0;
    }
    return this.#ids[this.#nextId++];
  }

  /** Gives back the id `newId` just gave (its entry was not built): the next append takes it. */
  unusedId() {
    this.#nextId--;
  }

  /** The id of the last non-header entry (`_buildIndex`'s leaf), or null. */
  lastEntryId() {
    const last = this.core().lastEntry();
    if (last < 0) return null;
    // Not cached: unparsed entries keep `createBranchedSession`'s byte path.
    const known = this.#objs[last];
    return (known !== undefined ? known : this.#parse(last)).id;
  }

  /** Adds an entry the facade built with an id from `newId` (indexed when the core is next asked). */
  push(entry) {
    this.#objs.push(entry);
  }

  /** Takes back the last `push` (its write failed). */
  pop() {
    const entry = this.#objs.pop();
    if (this.#indexed > this.#objs.length) {
      this.#native.pop();
      this.#indexed--;
    }
    // Free again, as in `byId` once the reference deletes it.
    if (typeof entry.id === "string") this.#native.releaseId(entry.id);
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

  /** Replaces everything with JS objects (`_buildIndex`); returns the leaf id. */
  reset(entries) {
    let leafId = null;
    for (const entry of entries) {
      // A null entry throws `_buildIndex`'s TypeError (named `entry`: JavaScriptCore quotes it).
      if (entry.type === "session") continue;
      leafId = entry.id;
    }
    this.#replaceNative(new NativeSession());
    this.#indexed = 0;
    this.#objs = entries;
    this.#dropIds(entries.length > 0);
    return leafId;
  }

  /**
   * The core session from now on. The one it replaces is closed at once: its snapshot and file
   * would otherwise stay until a GC and a turn of the event loop (Node runs Node-API finalizers
   * from an immediate), which a synchronous loop over many sessions never takes. Nothing can
   * ask it for a line any more: its objects were made already, or are not needed.
   */
  #replaceNative(next) {
    const old = this.#native;
    this.#native = next;
    if (old !== next) old.close();
  }

  /** Takes a core session as the whole state; `objs` holds the objects known already. */
  adopt(native, objs = new Array(native.count())) {
    this.#replaceNative(native);
    this.#indexed = objs.length;
    this.#objs = objs;
    this.#dropIds(false);
  }

  /** A new core session: the ids reserved by the old one go with it. */
  #dropIds(foreign) {
    this.#ids = [];
    this.#nextId = 0;
    this.#foreign = foreign;
  }
}

module.exports = { Entries };
