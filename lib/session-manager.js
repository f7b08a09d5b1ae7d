"use strict";
// The SessionManager class of pi 1.6.0 over the native core, which answers index, path, tree and
// context questions with positions that `Entries` (entries.js) turns into the entry objects.

const { existsSync, mkdirSync, openSync, statSync } = require("node:fs");
const { resolve } = require("node:path");
const { binding, call, uuidv7 } = require("./native.js");
const { keyOf } = require("./keys.js");
const { Entries } = require("./entries.js");
const { branchedEntries, buildTree } = require("./tree.js");
const paths = require("./paths.js");
const persistence = require("./persistence.js");
const context = require("./context.js");
const listing = require("./listing.js");

const { NativeSession } = binding;
const { APP_NAME, getDefaultSessionDir, getDefaultSessionDirPath, normalizePath, resolvePath, samePath } = paths;
const { SYNC_APPENDS, assertValidSessionId, newSessionParts, nowIso, stringifyLines } = persistence;

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

  // ---- Entry objects and the index

  /** The core session, with every pending entry indexed. */
  #core() {
    return this.#entries.core();
  }

  /** The fields every appended entry starts with, in the reference's order. */
  #head(type, id) {
    return { type, id, parentId: this.#leafId, timestamp: nowIso() };
  }

  /** `fileEntries = entries; _buildIndex()`. */
  #resetTo(entries) {
    this.#leafId = this.#entries.reset(entries);
  }

  /** Indexes `text` (the JSONL of `entries`) and writes it as the whole file when this persists. */
  #replaceFromText(entries, text, exclusive) {
    const path = this.#persist ? this.#sessionFile : null;
    // Windows refuses to replace the file the core holds open (a migration): it lets go first.
    if (path !== null) call(() => this.#entries.releaseFile());
    this.#entries.adopt(
      call(() => NativeSession.fromText(text, path, exclusive)),
      entries,
    );
    this.#leafId = this.#entries.lastEntryId();
  }

  // ---- Session files

  /** Switch to a different session file (used for resume and branching) */
  setSessionFile(sessionFile) {
    this.#setSessionFile(sessionFile);
  }

  #setSessionFile(sessionFile, preloaded) {
    this.#sessionFile = resolvePath(sessionFile);
    if (existsSync(this.#sessionFile)) {
      const loaded = preloaded?.native ?? call(() => NativeSession.load(normalizePath(this.#sessionFile)));
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
      this.#loadNative(loaded, preloaded?.header);
      this.#flushed = true;
    } else {
      const explicitPath = this.#sessionFile;
      this.newSession();
      this.#sessionFile = explicitPath;
    }
  }

  /** `_loadEntries` for a loaded file; its header is item 0 (`header`, when parsed already). */
  #loadNative(native, header = undefined) {
    const objs = new Array(native.count());
    if (header !== undefined) objs[0] = header;
    this.#entries.adopt(native, objs);
    header = this.#entries.at(0);
    this.#sessionId = header.id;
    const version = header?.version ?? 1;
    if (!(version >= persistence.CURRENT_SESSION_VERSION)) {
      const entries = this.#entries.all();
      persistence.migrateToCurrentVersion(entries);
      if (this.#persist && this.#sessionFile) persistence.backupBeforeMigration(this.#sessionFile, version);
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
      if (persistence.migrateToCurrentVersion(entries)) this.#rewriteFile();
      this.#resetTo(entries);
    } else {
      this.newSession(options);
      this.#resetTo(this.#entries.all().concat(entries));
    }
  }

  /** Atomic replacement of the whole file (`_rewriteFile`). */
  #rewriteFile() {
    if (!this.#persist || !this.#sessionFile) return;
    const text = stringifyLines(this.#entries.all());
    call(() => this.#core().writeAll(this.#sessionFile, text, false));
  }

  newSession(options) {
    if (options?.id !== undefined) assertValidSessionId(options.id);
    const dir = this.getSessionDir();
    const { id, header, file } = newSessionParts(dir, this.#cwd, options?.parentSession, options?.id ?? uuidv7());
    this.#sessionId = id;
    this.#resetTo([header]);
    this.#flushed = false;
    if (this.#persist) this.#sessionFile = file;
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
    return samePath(this.#sessionDir, getDefaultSessionDirPath(this.#cwd));
  }

  getSessionId() {
    return this.#sessionId;
  }

  getSessionFile() {
    return this.#sessionFile;
  }

  #hasConversation() {
    const { found, messageMissingAt: at } = this.#core().hasConversation();
    if (at !== undefined) context.throwMessageMissingInHasConversation(this.#entries.at(at));
    return found;
  }

  /** The whole file at the first conversation, then one line per entry (public, as in pi). */
  _persist(entry) {
    if (!this.#persist || !this.#sessionFile) return;
    if (!this.#flushed) {
      if (!this.#hasConversation()) return;
      // A path with a NUL byte: pi's `openSync(file, "wx")` throws Node's own TypeError
      // (ERR_INVALID_ARG_VALUE) here, before anything is serialised; the same call throws it
      // (Node checks the path before it touches the disk).
      if (this.#sessionFile.includes("\0")) openSync(this.#sessionFile, "wx");
      // Serialised first: a value JSON cannot hold leaves no half-written file.
      const text = stringifyLines(this.#entries.all());
      call(() => this.#core().writeAll(this.#sessionFile, text, true));
      this.#flushed = true;
    } else {
      const json = JSON.stringify(entry);
      call(() => this.#core().appendLine(this.#sessionFile, json, SYNC_APPENDS, this.#entries.heldLines));
    }
  }

  /** `_appendEntry` of the entry `build(id)` makes. */
  #append(build) {
    if (this.#persist && this.#flushed && this.#sessionFile) return this.#appendToFile(build);
    const id = this.#entries.newId();
    let entry;
    try {
      entry = build(id);
    } catch (error) {
      this.#entries.unusedId();
      throw error;
    }
    const previousLeafId = this.#leafId;
    this.#entries.push(entry);
    this.#leafId = entry.id;
    try {
      this._persist(entry);
    } catch (error) {
      this.#entries.pop();
      this.#leafId = previousLeafId;
      throw error;
    }
    return entry;
  }

  /** An append to the file on disk; other writers' entries, indexed on the way, are their own branch. */
  #appendToFile(build) {
    const entry = persistence.commitEntry(this.#core(), this.#entries, this.#sessionFile, build);
    this.#leafId = entry.id;
    return entry;
  }

  // ---- Appends

  appendMessage(message) {
    // Not spread from `#head`: the hot append, where the second object cost 4-5x.
    return this.#append((id) => ({ type: "message", id, parentId: this.#leafId, timestamp: nowIso(), message })).id;
  }

  appendThinkingLevelChange(thinkingLevel) {
    return this.#append((id) => ({ ...this.#head("thinking_level_change", id), thinkingLevel })).id;
  }

  appendModelChange(provider, modelId) {
    return this.#append((id) => ({ ...this.#head("model_change", id), provider, modelId })).id;
  }

  appendUsage(kind, provider, model, usage, note) {
    const noteField = note ? { note } : {};
    return this.#append((id) => ({ ...this.#head("usage", id), kind, provider, model, usage, ...noteField }));
  }

  /**
   * Append a compaction summary. The optional 7th argument `retainedTail` (seed format) makes it a
   * self-contained checkpoint; read from `arguments`, so that `appendCompaction.length` stays 6.
   */
  appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, usage) {
    const retainedTail = arguments[6];
    return this.#append((id) => {
      const systemMessage = context.getCurrentSystemMessage(this.buildSessionProjection().messages);
      const head = this.#head("compaction", id);
      return {
        ...head,
        summary,
        firstKeptEntryId: firstKeptEntryId ?? id,
        tokensBefore,
        ...(retainedTail !== undefined ? { retainedTail } : {}),
        details,
        usage,
        fromHook,
        ...(systemMessage
          ? { systemMessage: { ...systemMessage, timestamp: new Date(head.timestamp).getTime() } }
          : {}),
      };
    }).id;
  }

  appendCustomEntry(customType, data) {
    const build = (id) => ({ type: "custom", customType, data, id, parentId: this.#leafId, timestamp: nowIso() });
    return this.#append(build).id;
  }

  appendSessionInfo(name) {
    const sanitizedName = name.replace(/[\r\n]+/g, " ").trim();
    return this.#append((id) => ({ ...this.#head("session_info", id), name: sanitizedName })).id;
  }

  getSessionName() {
    const pos = this.#core().lastSessionInfo();
    if (pos < 0) return undefined;
    // Named `entry` as in the reference: JavaScriptCore's TypeError quotes the expression.
    const entry = this.#entries.at(pos);
    return entry.type === "session_info" ? entry.name?.trim() || undefined : undefined;
  }

  appendCustomMessageEntry(customType, content, display, details) {
    return this.#append((id) => ({
      type: "custom_message",
      customType,
      content,
      display,
      details,
      id,
      parentId: this.#leafId,
      timestamp: nowIso(),
    })).id;
  }

  appendContextEdit(targetId, replacement) {
    context.assertEditReplacement(replacement);
    return this.#append((id) => {
      const target = this.getEntry(targetId);
      if (!target) throw new Error(`Entry ${targetId} not found`);
      if (!this.getBranch().some((entry) => entry.id === targetId)) {
        throw new Error(`Entry ${targetId} is not on the active branch`);
      }
      const normalizedReplacement = context.editReplacementFor(target, targetId, replacement);
      return { ...this.#head("context_edit", id), targetId, replacement: normalizedReplacement };
    }).id;
  }

  // ---- Tree traversal

  getLeafId() {
    return this.#leafId;
  }

  getLeafEntry() {
    return this.#leafId ? this.getEntry(this.#leafId) : undefined;
  }

  getEntry(id) {
    const pos = this.#core().lookup(keyOf(id));
    return pos < 0 ? undefined : this.#entries.at(pos);
  }

  getChildren(parentId) {
    return this.#entries.atMany(this.#core().children(keyOf(parentId)));
  }

  getLabel(id) {
    const pos = this.#core().label(keyOf(id));
    return pos < 0 ? undefined : this.#entries.at(pos).label;
  }

  appendLabelChange(targetId, label) {
    return this.#append((id) => {
      if (!this.#entries.has(targetId)) throw new Error(`Entry ${targetId} not found`);
      return { ...this.#head("label", id), targetId, label };
    }).id;
  }

  getBranch(fromId) {
    const startId = fromId ?? this.#leafId;
    return this.#entries.atMany(call(() => this.#core().branch(keyOf(startId))));
  }

  buildContextEntries() {
    const positions = call(() => this.#core().contextEntries(keyOf(this.#leafId)));
    if (typeof positions === "number") context.throwMessageMissing(this.#entries.at(positions));
    return this.#entries.atMany(positions);
  }

  buildSessionProjection() {
    const plan = call(() => this.#core().contextPlan(keyOf(this.#leafId)));
    if (typeof plan === "number") context.throwMessageMissing(this.#entries.at(plan));
    return context.projectPlan(plan, this.#entries);
  }

  buildSessionContext() {
    const { messages, thinkingLevel, model } = this.buildSessionProjection();
    return { messages, thinkingLevel, model };
  }

  getHeader() {
    const pos = this.#core().header();
    return pos < 0 ? null : this.#entries.at(pos);
  }

  getEntryCount() {
    return this.#entries.entryCount;
  }

  getEntries() {
    return this.#entries.likeFileEntries(this.#entries.atMany(this.#core().entries()));
  }

  getTree() {
    return buildTree(this.#core(), this.#entries);
  }

  // ---- Branching

  branch(branchFromId) {
    if (!this.#entries.has(branchFromId)) throw new Error(`Entry ${branchFromId} not found`);
    this.#leafId = branchFromId;
  }

  resetLeaf() {
    this.#leafId = null;
  }

  branchWithSummary(branchFromId, summary, details, fromHook, usage) {
    return this.#append((id) => {
      if (branchFromId !== null && !this.#entries.has(branchFromId)) throw new Error(`Entry ${branchFromId} not found`);
      const fromId = this.#leafId ?? "root";
      this.#leafId = branchFromId;
      return { ...this.#head("branch_summary", id), fromId, summary, details, usage, fromHook };
    }).id;
  }

  createBranchedSession(leafId) {
    if (this.#persist) {
      const done = this.#createBranchedInCore(leafId);
      if (done !== undefined) return done;
    }
    // Entries held as objects, odd paths, or no conversation: tree.js says why.
    const parent = this.#persist ? this.#sessionFile : undefined;
    const plan = call(() => this.#core().branchPlan(keyOf(leafId ?? this.#leafId)));
    if (!plan.found) throw new Error(`Entry ${leafId} not found`);
    const fresh = branchedEntries(plan, this.#entries, this.getSessionDir(), this.#cwd, parent);
    const { entries } = fresh;
    this.#resetTo(entries);
    this.#sessionId = fresh.id;
    if (!this.#persist) return undefined;
    this.#sessionFile = fresh.file;
    if (this.#hasConversation()) {
      this.#replaceFromText(entries, stringifyLines(entries), false);
      this.#flushed = true;
    } else {
      this.#flushed = false;
    }
    return fresh.file;
  }

  /** `createBranchedSession` in one core call (`branch.rs`), or undefined for the JS path. */
  #createBranchedInCore(leafId) {
    let fresh;
    const next = call(() =>
      this.#core().branchedSession(keyOf(leafId ?? this.#leafId), (path) => {
        // Only lines nobody parsed: the reference copies objects, which may differ from their lines.
        for (const p of path) if (this.#entries.isMaterialised(p)) return null;
        fresh = newSessionParts(this.getSessionDir(), this.#cwd, this.#sessionFile, uuidv7());
        return [fresh.file, `${JSON.stringify(fresh.header)}\n`];
      }),
    );
    if (next === null) return undefined;
    this.#sessionId = fresh.id;
    this.#sessionFile = fresh.file;
    const objs = new Array(next.count());
    objs[0] = fresh.header;
    this.#entries.adopt(next, objs);
    this.#leafId = this.#entries.lastEntryId();
    this.#flushed = true;
    return fresh.file;
  }

  // ---- Construction and discovery

  static create(cwd, sessionDir, options) {
    const dir = sessionDir ? normalizePath(sessionDir) : getDefaultSessionDir(cwd);
    return new SessionManager(cwd, dir, undefined, true, options);
  }

  static open(path, sessionDir, cwdOverride) {
    const resolvedPath = resolvePath(path);
    let header = null;
    let preloaded;
    const dir = sessionDir ? normalizePath(sessionDir) : resolve(resolvedPath, "..");
    if (cwdOverride === undefined && existsSync(resolvedPath)) {
      ({ header, preloaded } = persistence.readOpenHeader(resolvedPath, !existsSync(dir)));
    }
    const cwd = cwdOverride ?? (header ? listing.getSessionHeaderCwd(header) : undefined) ?? process.cwd();
    return new SessionManager(cwd, dir, resolvedPath, true, undefined, preloaded);
  }

  static continueRecent(cwd, sessionDir) {
    const dir = sessionDir ? normalizePath(sessionDir) : getDefaultSessionDir(cwd);
    const filterCwd = sessionDir !== undefined && !samePath(dir, getDefaultSessionDirPath(cwd));
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
    let dir;
    let fresh;
    // The reference's steps between its load and its write, in its order.
    const written = persistence.writeFork(resolvedSourcePath, () => {
      dir = sessionDir ? normalizePath(sessionDir) : getDefaultSessionDir(resolvedTargetCwd);
      if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
      if (options?.id !== undefined) assertValidSessionId(options.id);
      fresh = newSessionParts(dir, resolvedTargetCwd, resolvedSourcePath, options?.id ?? uuidv7());
      return fresh;
    });
    if (written === null) {
      throw new Error(`Cannot fork: source session file is empty or invalid: ${resolvedSourcePath}`);
    }
    return new SessionManager(resolvedTargetCwd, dir, fresh.file, true, undefined, { native: written });
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

// How pi/swap.js tells that pi already runs on this class.
Object.defineProperty(SessionManager, Symbol.for("pi-session-native.class"), { value: true });

module.exports = { SessionManager };
