"use strict";
// The SessionManager class: the surface of pi 1.6.0, over the native core.
//
// The core answers index, path, tree and context questions with positions; `Entries`
// (entries.js) turns positions into the entry objects. This file shapes the reference's
// API over them: appends, persistence, branching, construction.

const { existsSync, mkdirSync, statSync } = require("node:fs");
const { resolve } = require("node:path");
const { binding, call, toJsError } = require("./native.js");
const { randomUUID } = require("node:crypto");
const { keyOf, skeletonFlags, targetKey, timeOf, typeCode } = require("./keys.js");
const { nowIso, shortId, uuidv7 } = require("./ids.js");
const { Entries } = require("./entries.js");
const { labelEntriesFor, withoutLabels } = require("./branching.js");
const { sessionFilePath, sessionHeader } = require("./header.js");
const { CURRENT_SESSION_VERSION, migrateToCurrentVersion } = require("./migrate.js");
const { APP_NAME, getDefaultSessionDirPath, normalizePath, pathsEqual, resolvePath } = require("./paths.js");
const context = require("./context.js");
const { getCurrentSystemMessage } = require("./messages.js");
const listing = require("./listing.js");

const { NativeSession } = binding;
const { assertValidSessionId } = context;

/** Opt-in durability: fsync every append (`PI_SESSION_NATIVE_FSYNC=1`). */
const SYNC_APPENDS = process.env.PI_SESSION_NATIVE_FSYNC === "1";

function getSessionHeaderCwd(header) {
  const cwd = header.cwd;
  return typeof cwd === "string" ? cwd : undefined;
}

function stringifyLines(entries) {
  let out = "";
  for (const e of entries) out += `${JSON.stringify(e)}\n`;
  return out;
}

class SessionManager {
  /** `fileEntries`, `byId` and the core index behind them. */
  #entries = new Entries();
  #sessionId = "";
  #sessionFile;
  #sessionDir;
  #cwd;
  #persist;
  #flushed = false;
  #leafId = null;
  /** The id generated for the append in progress. */
  #preparedId;

  constructor(cwd, sessionDir, sessionFile, persist, newSessionOptions, preloaded) {
    this.#cwd = resolvePath(cwd);
    this.#sessionDir = normalizePath(sessionDir);
    this.#persist = persist;
    if (persist && this.#sessionDir && !existsSync(this.#sessionDir)) {
      mkdirSync(this.#sessionDir, { recursive: true });
    }
    if (sessionFile) {
      this.#setSessionFile(sessionFile, preloaded);
    } else if (preloaded?.length) {
      this.#loadEntries(preloaded, newSessionOptions);
    } else {
      this.newSession(newSessionOptions);
    }
  }

  // ---------------------------------------------------------------------------
  // Entry objects and the index

  /** The core, with every pending entry indexed. */
  #n() {
    return this.#entries.core();
  }

  #obj(pos) {
    return this.#entries.at(pos);
  }

  #objsAt(positions) {
    return this.#entries.atMany(positions);
  }

  #allObjs() {
    return this.#entries.all();
  }

  /** The id for the entry being appended (`generateId(this.byId)`). */
  #newId() {
    const id = this.#preparedId;
    if (id !== undefined) {
      this.#preparedId = undefined;
      return id;
    }
    return this.#entries.newId();
  }

  /** Replaces `fileEntries` with JS objects and rebuilds the index (`_buildIndex`). */
  #resetTo(entries) {
    this.#leafId = this.#entries.reset(entries);
  }

  /**
   * Indexes `text` (the JSONL of `entries`) and, when this manager persists, writes it as the
   * whole file. A manager that does not persist never writes: it migrates in memory only.
   */
  #replaceFromText(entries, text, exclusive) {
    const path = this.#persist ? this.#sessionFile : null;
    this.#entries.adopt(
      call(() => NativeSession.fromText(text, path, exclusive)),
      entries,
    );
    this.#leafId = this.#entries.lastEntryId();
  }

  /** A `byId` Map of the objects, for replaying the reference algorithm on odd files. */
  #byIdMap() {
    const byId = new Map();
    for (const e of this.getEntries()) byId.set(e.id, e);
    return byId;
  }

  // ---------------------------------------------------------------------------
  // Session files

  /** Switch to a different session file (used for resume and branching) */
  setSessionFile(sessionFile) {
    this.#setSessionFile(sessionFile);
  }

  #setSessionFile(sessionFile, preloaded) {
    this.#sessionFile = resolvePath(sessionFile);
    if (existsSync(this.#sessionFile)) {
      const loaded = preloaded ?? call(() => NativeSession.load(normalizePath(this.#sessionFile)));
      if (loaded.status !== "loaded") {
        const explicitPath = this.#sessionFile;
        if (statSync(explicitPath).size > 0) {
          throw new Error(`Session file is not a valid ${APP_NAME} session: ${explicitPath}`);
        }
        this.newSession();
        this.#sessionFile = explicitPath;
        this.#rewriteFile();
        this.#flushed = true;
        return;
      }
      this.#loadNative(loaded);
      this.#flushed = true;
    } else {
      const explicitPath = this.#sessionFile;
      this.newSession();
      this.#sessionFile = explicitPath;
    }
  }

  /** `_loadEntries` for a loaded file: its first entry is the header. */
  #loadNative(native) {
    this.#entries.adopt(native);
    const header = this.#obj(0);
    this.#sessionId = header.id;
    const version = header?.version ?? 1;
    if (!(version >= CURRENT_SESSION_VERSION)) {
      const entries = this.#allObjs();
      migrateToCurrentVersion(entries);
      this.#backupBeforeMigration(version);
      this.#replaceFromText(entries, stringifyLines(entries), false);
      return;
    }
    this.#leafId = this.#entries.lastEntryId();
  }

  /** `_loadEntries` for entries handed in by the caller (`inMemory(cwd, options, entries)`). */
  #loadEntries(entries, options) {
    const header = entries.find((e) => e.type === "session");
    if (header) {
      this.#sessionId = header.id;
      if (migrateToCurrentVersion(entries)) this.#rewriteFile();
      this.#resetTo(entries);
    } else {
      this.newSession(options);
      this.#resetTo(this.#allObjs().concat(entries));
    }
  }

  /** Keeps the pre-migration file as `<file>.v<version>.bak` (the reference keeps none). */
  #backupBeforeMigration(version) {
    if (!this.#persist || !this.#sessionFile) return;
    const tag = typeof version === "number" && Number.isFinite(version) ? version : "x";
    call(() => binding.backupFile(this.#sessionFile, `${this.#sessionFile}.v${tag}.bak`));
  }

  /** Atomic replacement of the whole file (`_rewriteFile`). */
  #rewriteFile() {
    if (!this.#persist || !this.#sessionFile) return;
    const text = stringifyLines(this.#allObjs());
    call(() => this.#n().writeAll(this.#sessionFile, text, false));
  }

  newSession(options) {
    if (options?.id !== undefined) assertValidSessionId(options.id);
    this.#sessionId = options?.id ?? uuidv7();
    const timestamp = nowIso();
    this.#resetTo([sessionHeader(this.#sessionId, timestamp, this.#cwd, options?.parentSession)]);
    this.#flushed = false;
    if (this.#persist) this.#sessionFile = sessionFilePath(this.getSessionDir(), timestamp, this.#sessionId);
    return this.#sessionFile;
  }

  isPersisted() {
    return this.#persist;
  }

  getCwd() {
    return this.#cwd;
  }

  getSessionDir() {
    return this.#sessionDir;
  }

  usesDefaultSessionDir() {
    return pathsEqual(this.#sessionDir, getDefaultSessionDirPath(this.#cwd));
  }

  getSessionId() {
    return this.#sessionId;
  }

  getSessionFile() {
    return this.#sessionFile;
  }

  #hasConversation() {
    if (this.#entries.coreOwnsIds) {
      const known = this.#n().hasConversation();
      if (known >= 0) return known === 1;
    }
    return this.#allObjs().some(
      (e) => e.type === "message" && (e.message.role === "user" || e.message.role === "assistant"),
    );
  }

  /**
   * Writes an appended entry: the whole file once the session has a conversation, else one
   * line (kept public, as in the reference).
   */
  _persist(entry) {
    if (!this.#persist || !this.#sessionFile) return;
    if (!this.#flushed) {
      if (!this.#hasConversation()) return;
      // Serialised before the file is created: a value JSON cannot hold throws here
      // and leaves no half-written file behind (the reference would).
      const text = stringifyLines(this.#allObjs());
      call(() => this.#n().writeAll(this.#sessionFile, text, true));
      this.#flushed = true;
      // The file exists now: from here on the core checks ids and writes the appends.
      this.#entries.coreTakesIds();
    } else {
      // The core adds the newline (no concatenated string to flatten).
      const json = `${JSON.stringify(entry)}`;
      call(() => this.#n().appendLine(this.#sessionFile, json, SYNC_APPENDS));
    }
  }

  /** Builds and appends one entry (`_appendEntry`), through the file path when on disk. */
  #append(build) {
    if (this.#persist && this.#flushed && this.#sessionFile) return this.#appendToFile(build);
    const entry = build();
    const previousLeafId = this.#leafId;
    this.#entries.push(entry);
    this.#leafId = entry.id;
    try {
      this._persist(entry);
    } catch (error) {
      // Keep memory in line with the file, as the reference does.
      this.#entries.pop();
      this.#leafId = previousLeafId;
      throw error;
    }
    return entry;
  }

  /**
   * Appends to a session file on disk (`Session::commit` in the core): the core checks the
   * id is unused (else we build again with another id, as `generateId` would have picked
   * one), writes the entry as one line and indexes what other processes appended before it,
   * so the tree matches the file. Our leaf stays where it was: another writer's entries form
   * their own branch.
   */
  #appendToFile(build) {
    // The file exists: the core is the authority on ids from here on.
    this.#entries.coreTakesIds();
    const native = this.#n();
    for (let attempt = 0; ; attempt++) {
      this.#preparedId = attempt < 100 ? shortId() : randomUUID();
      let entry;
      try {
        entry = build();
      } finally {
        this.#preparedId = undefined;
      }
      const json = JSON.stringify(entry);
      const ty = typeCode(entry.type);
      const before = this.#entries.length;
      let count;
      try {
        count = native.commitLine(
          skeletonFlags(ty, entry),
          entry.id,
          keyOf(entry.parentId),
          targetKey(ty, entry),
          typeof entry.timestamp === "string" ? entry.timestamp : "",
          json,
          this.#sessionFile,
          SYNC_APPENDS,
        );
      } catch (error) {
        this.#entries.padTo(native.count());
        throw toJsError(error);
      }
      // The id is taken (nothing was written): build the entry again with another.
      if (count === before) continue;
      this.#entries.pushIndexed(entry, count);
      this.#leafId = entry.id;
      return entry;
    }
  }

  // ---------------------------------------------------------------------------
  // Appends

  appendMessage(message) {
    return this.#append(() => ({
      type: "message",
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
      message,
    })).id;
  }

  appendThinkingLevelChange(thinkingLevel) {
    return this.#append(() => ({
      type: "thinking_level_change",
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
      thinkingLevel,
    })).id;
  }

  appendModelChange(provider, modelId) {
    return this.#append(() => ({
      type: "model_change",
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
      provider,
      modelId,
    })).id;
  }

  appendUsage(kind, provider, model, usage, note) {
    return this.#append(() => ({
      type: "usage",
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
      kind,
      provider,
      model,
      usage,
      ...(note ? { note } : {}),
    }));
  }

  /**
   * Append a compaction summary. The optional 7th argument `retainedTail` (seed format)
   * stores the kept messages in the entry, making it a self-contained checkpoint. It is read
   * from `arguments` so that `appendCompaction.length` stays 6, as in pi 1.6.0.
   */
  appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, usage) {
    const retainedTail = arguments[6];
    return this.#append(() => {
      const timestamp = nowIso();
      const systemMessage = getCurrentSystemMessage(this.buildSessionProjection().messages);
      const id = this.#newId();
      return {
        type: "compaction",
        id,
        parentId: this.#leafId,
        timestamp,
        summary,
        firstKeptEntryId: firstKeptEntryId ?? id,
        tokensBefore,
        ...(retainedTail !== undefined ? { retainedTail } : {}),
        details,
        usage,
        fromHook,
        ...(systemMessage ? { systemMessage: { ...systemMessage, timestamp: new Date(timestamp).getTime() } } : {}),
      };
    }).id;
  }

  appendCustomEntry(customType, data) {
    return this.#append(() => ({
      type: "custom",
      customType,
      data,
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
    })).id;
  }

  appendSessionInfo(name) {
    const sanitizedName = name.replace(/[\r\n]+/g, " ").trim();
    return this.#append(() => ({
      type: "session_info",
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
      name: sanitizedName,
    })).id;
  }

  getSessionName() {
    const pos = this.#n().lastSessionInfo();
    if (pos < 0) return undefined;
    // Named `entry` as in the reference: a TypeError's text quotes the expression
    // (`entry.name?.trim is not a function` for a name that is not a string).
    const entry = this.#obj(pos);
    return entry.name?.trim() || undefined;
  }

  appendCustomMessageEntry(customType, content, display, details) {
    return this.#append(() => ({
      type: "custom_message",
      customType,
      content,
      display,
      details,
      id: this.#newId(),
      parentId: this.#leafId,
      timestamp: nowIso(),
    })).id;
  }

  appendContextEdit(targetId, replacement) {
    if (
      replacement !== null &&
      (typeof replacement !== "object" ||
        !("content" in replacement) ||
        (typeof replacement.content !== "string" && !Array.isArray(replacement.content)))
    ) {
      throw new Error("Context edit replacement must be null or contain string/array content");
    }
    return this.#append(() => {
      const target = this.getEntry(targetId);
      if (!target) throw new Error(`Entry ${targetId} not found`);
      if (!this.getBranch().some((entry) => entry.id === targetId)) {
        throw new Error(`Entry ${targetId} is not on the active branch`);
      }
      const editable =
        target.type === "custom_message" ||
        (target.type === "message" &&
          (target.message.role === "user" ||
            target.message.role === "assistant" ||
            target.message.role === "toolResult"));
      if (!editable) throw new Error(`Entry ${targetId} does not contribute editable model content`);
      const targetRole = target.type === "message" ? target.message.role : "custom";
      const normalizedReplacement =
        replacement !== null &&
        (targetRole === "assistant" || targetRole === "toolResult") &&
        typeof replacement.content === "string"
          ? { content: [{ type: "text", text: replacement.content }] }
          : replacement;
      return {
        type: "context_edit",
        id: this.#newId(),
        parentId: this.#leafId,
        timestamp: nowIso(),
        targetId,
        replacement: normalizedReplacement,
      };
    }).id;
  }

  // ---------------------------------------------------------------------------
  // Tree traversal

  getLeafId() {
    return this.#leafId;
  }

  getLeafEntry() {
    return this.#leafId ? this.getEntry(this.#leafId) : undefined;
  }

  getEntry(id) {
    const pos = this.#n().lookup(keyOf(id));
    return pos < 0 ? undefined : this.#obj(pos);
  }

  getChildren(parentId) {
    return this.#objsAt(this.#n().children(keyOf(parentId)));
  }

  getLabel(id) {
    const pos = this.#n().label(keyOf(id));
    return pos < 0 ? undefined : this.#obj(pos).label;
  }

  appendLabelChange(targetId, label) {
    // The core applies the label to its map as the entry is indexed, and undoes it if the
    // write fails, which is where the reference sets labelsById.
    return this.#append(() => {
      if (!this.#entries.has(targetId)) throw new Error(`Entry ${targetId} not found`);
      return {
        type: "label",
        id: this.#newId(),
        parentId: this.#leafId,
        timestamp: nowIso(),
        targetId,
        label,
      };
    }).id;
  }

  getBranch(fromId) {
    const startId = fromId ?? this.#leafId;
    return this.#objsAt(call(() => this.#n().branch(keyOf(startId))));
  }

  buildContextEntries() {
    const plan = call(() => this.#n().contextPlan(keyOf(this.#leafId)));
    if (plan === null) return context.buildContextEntries(this.getEntries(), this.#leafId, this.#byIdMap());
    const positions = [];
    for (let i = 2; i < plan.length; i += 3) positions.push(plan[i]);
    return this.#objsAt(positions);
  }

  buildSessionProjection() {
    const plan = call(() => this.#n().contextPlan(keyOf(this.#leafId)));
    if (plan === null) return context.buildSessionProjection(this.getEntries(), this.#leafId, this.#byIdMap());
    let thinkingLevel = "off";
    if (plan[0] >= 0) thinkingLevel = this.#obj(plan[0]).thinkingLevel;
    let model = null;
    if (plan[1] >= 0) {
      const e = this.#obj(plan[1]);
      model =
        e.type === "model_change"
          ? { provider: e.provider, modelId: e.modelId }
          : { provider: e.message.provider, modelId: e.message.model };
    }
    const positions = [];
    for (let i = 2; i < plan.length; i += 3) positions.push(plan[i]);
    const sources = this.#objsAt(positions);
    const projectedEntries = new Array(sources.length);
    for (let k = 0; k < sources.length; k++) {
      const edit = plan[3 + 3 * k];
      const noMessages = plan[4 + 3 * k] === 1;
      const sourceEntry = sources[k];
      projectedEntries[k] = {
        sourceEntry,
        messages: noMessages ? [] : context.projectContextEntry(sourceEntry, edit >= 0 ? this.#obj(edit) : undefined),
      };
    }
    return {
      entries: projectedEntries,
      messages: projectedEntries.flatMap((entry) => entry.messages),
      thinkingLevel,
      model,
    };
  }

  buildSessionContext() {
    const { messages, thinkingLevel, model } = this.buildSessionProjection();
    return { messages, thinkingLevel, model };
  }

  getHeader() {
    const pos = this.#n().header();
    return pos < 0 ? null : this.#obj(pos);
  }

  getEntryCount() {
    return this.#entries.entryCount;
  }

  getEntries() {
    return this.#objsAt(this.#n().entries());
  }

  #labelMaps() {
    const labels = new Map();
    const stamps = new Map();
    for (const e of this.#objsAt(this.#n().labels())) {
      labels.set(e.targetId, e.label);
      stamps.set(e.targetId, e.timestamp);
    }
    return { labels, stamps };
  }

  getTree() {
    const native = this.#n();
    const positions = native.entries();
    const entries = this.#objsAt(positions);
    const { labels, stamps } = this.#labelMaps();
    const links = call(() => native.treeLinks());
    const times = native.times();
    // Nodes and child lists by position; `treeLinks` already applied the reference's
    // nodeMap rules (the last entry with an id owns its node; orphans become roots).
    const nodes = new Array(this.#entries.length);
    const kids = new Array(this.#entries.length);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      nodes[positions[i]] = { entry, children: [], label: labels.get(entry.id), labelTimestamp: stamps.get(entry.id) };
    }
    const roots = [];
    for (let i = 0; i < entries.length; i++) {
      const node = links[2 * i];
      const parent = links[2 * i + 1];
      if (parent < 0) roots.push(node);
      else (kids[parent] ??= []).push(node);
    }
    const time = (p) => {
      let t = times[p];
      if (t === Number.POSITIVE_INFINITY) times[p] = t = timeOf(nodes[p].entry.timestamp);
      return t;
    };
    // The reference's iterative sort, on positions: same comparisons in the same order,
    // so ties and NaN times come out identically.
    const stack = [...roots];
    while (stack.length > 0) {
      const children = kids[stack.pop()];
      if (children === undefined) continue;
      children.sort((a, b) => time(a) - time(b));
      stack.push(...children);
    }
    for (let p = 0; p < kids.length; p++) {
      const children = kids[p];
      if (children === undefined) continue;
      const out = nodes[p].children;
      for (const q of children) out.push(nodes[q]);
    }
    return roots.map((p) => nodes[p]);
  }

  // ---------------------------------------------------------------------------
  // Branching

  branch(branchFromId) {
    if (!this.#entries.has(branchFromId)) throw new Error(`Entry ${branchFromId} not found`);
    this.#leafId = branchFromId;
  }

  resetLeaf() {
    this.#leafId = null;
  }

  branchWithSummary(branchFromId, summary, details, fromHook, usage) {
    return this.#append(() => {
      if (branchFromId !== null && !this.#entries.has(branchFromId)) throw new Error(`Entry ${branchFromId} not found`);
      const fromId = this.#leafId ?? "root";
      this.#leafId = branchFromId;
      return {
        type: "branch_summary",
        id: this.#newId(),
        parentId: branchFromId,
        timestamp: nowIso(),
        fromId,
        summary,
        details,
        usage,
        fromHook,
      };
    }).id;
  }

  createBranchedSession(leafId) {
    if (this.#persist) {
      const done = this.#createBranchedFromLines(leafId);
      if (done !== undefined) return done;
    }
    const previousSessionFile = this.#sessionFile;
    const path = this.getBranch(leafId);
    if (path.length === 0) throw new Error(`Entry ${leafId} not found`);
    const pathWithoutLabels = withoutLabels(path);
    const { newSessionId, newSessionFile, header } = this.#branchHeader(
      this.#persist ? previousSessionFile : undefined,
    );
    const pathIds = pathWithoutLabels.map((e) => e.id);
    const labelEntries = this.#branchLabels(pathIds);
    const entries = [header, ...pathWithoutLabels, ...labelEntries];
    this.#resetTo(entries);
    this.#sessionId = newSessionId;
    if (!this.#persist) return undefined;
    this.#sessionFile = newSessionFile;
    if (this.#hasConversation()) {
      // Serialise once: the same text is written and indexed.
      this.#replaceFromText(entries, stringifyLines(entries), false);
      this.#flushed = true;
    } else {
      this.#flushed = false;
    }
    return newSessionFile;
  }

  /** The new session id, file and header of a branched session. */
  #branchHeader(parentSession) {
    const newSessionId = uuidv7();
    const timestamp = nowIso();
    const newSessionFile = sessionFilePath(this.getSessionDir(), timestamp, newSessionId);
    const header = sessionHeader(newSessionId, timestamp, this.#cwd, parentSession);
    return { newSessionId, newSessionFile, header };
  }

  /**
   * The label entries a branched session re-creates for the labels on its path, chained
   * after its last entry, with the label's original timestamp (the reference's rules).
   */
  #branchLabels(pathIds) {
    const { labels, stamps } = this.#labelMaps();
    return labelEntriesFor(pathIds, labels, stamps);
  }

  /**
   * `createBranchedSession` for a persisted session whose path lines are loaded and
   * canonical: the core rewrites the path's lines (`parentId`, `firstKeptEntryId`) as bytes,
   * so no entry is parsed into JS. Returns undefined to take the JS path (entries built in
   * JS, unusual lines, or a branch without a conversation, which stays in memory).
   */
  #createBranchedFromLines(leafId) {
    const native = this.#n();
    const positions = call(() => native.branch(keyOf(leafId ?? this.#leafId)));
    if (positions.length === 0) return undefined;
    // Only lines nobody has parsed: a JS object may hold what its line does not (values
    // built in JS, or a caller's changes), and the reference copies the objects.
    for (const p of positions) if (this.#entries.isMaterialised(p)) return undefined;
    const rewritten = call(() => native.branchedLines(positions));
    if (rewritten === null) return undefined;
    const [idsJson, conversation] = rewritten;
    if (!conversation) return undefined;
    const previousSessionFile = this.#sessionFile;
    const pathIds = JSON.parse(idsJson);
    const { newSessionId, newSessionFile, header } = this.#branchHeader(previousSessionFile);
    const labelEntries = this.#branchLabels(pathIds);
    const next = call(() =>
      native.commitBranched(newSessionFile, `${JSON.stringify(header)}\n`, stringifyLines(labelEntries)),
    );
    const objs = new Array(1 + pathIds.length + labelEntries.length);
    objs[0] = header;
    for (let i = 0; i < labelEntries.length; i++) objs[1 + pathIds.length + i] = labelEntries[i];
    this.#sessionId = newSessionId;
    this.#sessionFile = newSessionFile;
    this.#entries.adopt(next, objs);
    this.#leafId = this.#entries.lastEntryId();
    this.#flushed = true;
    return newSessionFile;
  }

  // ---------------------------------------------------------------------------
  // Construction and discovery

  static create(cwd, sessionDir, options) {
    const dir = sessionDir ? normalizePath(sessionDir) : context.getDefaultSessionDir(cwd);
    return new SessionManager(cwd, dir, undefined, true, options);
  }

  static open(path, sessionDir, cwdOverride) {
    const resolvedPath = resolvePath(path);
    let header = null;
    let preloaded;
    if (cwdOverride === undefined && existsSync(resolvedPath)) {
      const scan = call(() => binding.readHeader(resolvedPath));
      if (scan.kind === "limitExceeded") {
        // The bounded scan is only a discovery optimisation; a full load is authoritative.
        preloaded = call(() => NativeSession.load(normalizePath(resolvedPath)));
        const first = preloaded.status === "loaded" ? JSON.parse(preloaded.line(0)) : undefined;
        header = first?.type === "session" ? first : null;
      } else {
        header = scan.kind === "header" ? JSON.parse(scan.line) : null;
      }
    }
    const cwd = cwdOverride ?? (header ? getSessionHeaderCwd(header) : undefined) ?? process.cwd();
    const dir = sessionDir ? normalizePath(sessionDir) : resolve(resolvedPath, "..");
    return new SessionManager(cwd, dir, resolvedPath, true, undefined, preloaded);
  }

  static continueRecent(cwd, sessionDir) {
    const dir = sessionDir ? normalizePath(sessionDir) : context.getDefaultSessionDir(cwd);
    const filterCwd = sessionDir !== undefined && !pathsEqual(dir, getDefaultSessionDirPath(cwd));
    const mostRecent = listing.findMostRecentSession(dir, filterCwd ? cwd : undefined);
    if (mostRecent) return new SessionManager(cwd, dir, mostRecent, true);
    return new SessionManager(cwd, dir, undefined, true);
  }

  static inMemory(cwd = process.cwd(), options, entries) {
    return new SessionManager(cwd, "", undefined, false, options, entries);
  }

  static forkFrom(sourcePath, targetCwd, sessionDir, options) {
    const resolvedSourcePath = resolvePath(sourcePath);
    const resolvedTargetCwd = resolvePath(targetCwd);
    const source = call(() => NativeSession.load(normalizePath(resolvedSourcePath)));
    if (source.status !== "loaded") {
      throw new Error(`Cannot fork: source session file is empty or invalid: ${resolvedSourcePath}`);
    }
    const dir = sessionDir ? normalizePath(sessionDir) : context.getDefaultSessionDir(resolvedTargetCwd);
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
    if (options?.id !== undefined) assertValidSessionId(options.id);
    const newSessionId = options?.id ?? uuidv7();
    const timestamp = nowIso();
    const newSessionFile = sessionFilePath(dir, timestamp, newSessionId);
    const newHeader = sessionHeader(newSessionId, timestamp, resolvedTargetCwd, resolvedSourcePath);
    // Every non-header entry is written as JSON.stringify(JSON.parse(line)): lines that are
    // already canonical go through as bytes, the rest are re-serialised here.
    const positions = source.entries();
    const canonical = binding.canonicalLines(source, positions);
    const overridePos = [];
    const overrideText = [];
    for (let i = 0; i < positions.length; i++) {
      if (!canonical[i]) {
        overridePos.push(positions[i]);
        overrideText.push(JSON.stringify(JSON.parse(source.line(positions[i]))));
      }
    }
    call(() =>
      binding.writeSessionFile(
        newSessionFile,
        `${JSON.stringify(newHeader)}\n`,
        source,
        positions,
        Uint32Array.from(overridePos),
        overrideText,
        true,
      ),
    );
    return new SessionManager(resolvedTargetCwd, dir, newSessionFile, true);
  }

  static findById(cwd, id, sessionDir) {
    return listing.findById(cwd, id, sessionDir);
  }

  static list(cwd, sessionDir, onProgress, signal) {
    return listing.list(cwd, sessionDir, onProgress, signal);
  }

  static listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
    return listing.listAll(sessionDirOrOnProgress, onProgressOrSignal, signal);
  }
}

module.exports = { SessionManager };
