// Loads the two implementations under comparison.
//
//   ref  : the pinned JavaScript reference, @earendil-works/pi-coding-agent@1.6.0 dist/core/session-manager.js
//          (the package's `exports` do not expose it, so it is imported by file URL; it loads on Node 20);
//          with DIFF_PI=<version>, that release's module (helpers/pi-version.mjs).
//   ours : pi-session-native (../../index.js, CommonJS), running the profile of the reference's release.
//
// Environment:
//   DIFF_PI=version    compare with that pi release (installed into .cache/pi/ if missing); ours runs its
//                      profile (PI_SESSION_NATIVE_PI). `npm run test:pi-versions` runs every verified release.
//   DIFF_SELF=1        compare the reference against a second, separate instance of itself. Verifies the harness
//                      (normalisation must make two runs of the same code compare equal).
//   DIFF_SABOTAGE=name with DIFF_SELF=1, deliberately break the "ours" side in one way (see SABOTAGES below) to
//                      check that the suite notices. Never set in normal runs.
//   DIFF_OURS=path     load "ours" from another file (default ../../index.js; e.g. ../../index.mjs).
import { closeSync, existsSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Normalizer } from "../../support/normalize.mjs";
import { REF_PROFILE, REF_URL } from "./pi-version.mjs";

export { REF_PROFILE, REF_URL, REF_VERSION } from "./pi-version.mjs";

export const SELF = process.env.DIFF_SELF === "1";
export const SABOTAGE = process.env.DIFF_SABOTAGE || "";

/**
 * pi before 1.5.0 keeps an entry whose append failed in memory (it becomes the leaf and the parent of
 * later entries, which the file then lacks); ours rolls it back in every profile, as 1.5.0 does (our
 * documented data-safety fix, docs/pi.md). Against such a reference the harness gives the reference
 * 1.5.0's rollback (rollBackFailedAppends below) and nothing else, so that what follows a failed append
 * is still compared; pi-versions.test.mjs checks that the unpatched reference does keep the entry.
 */
export const REF_KEEPS_FAILED_APPENDS = REF_PROFILE === "1.0";

/** pi 1.5.0's `_appendEntry`, put on the SessionManager of a pre-1.5.0 module (see above). */
export function rollBackFailedAppends(mod) {
  mod.SessionManager.prototype._appendEntry = function _appendEntry(entry) {
    const previousLeafId = this.leafId;
    this.fileEntries.push(entry);
    this.byId.set(entry.id, entry);
    this.leafId = entry.id;
    try {
      this._persist(entry);
    } catch (error) {
      this.fileEntries.pop();
      this.byId.delete(entry.id);
      this.leafId = previousLeafId;
      throw error;
    }
  };
}

/**
 * Where the session file was deleted or moved away while a manager had it, pi's class appends headerless lines
 * at the path (pi's #8939), a file it cannot open again; ours writes the whole session there (our documented
 * data-safety fix, docs/safety.md "The outside world"). The harness gives the reference that fix and nothing else
 * (its own first-flush code: `wx`, every entry), so that what follows an external delete is still compared;
 * append/outside.test.mjs checks the unpatched reference's headerless lines.
 */
export function writeWholeWhereGone(mod) {
  const proto = mod.SessionManager.prototype;
  const persist = proto._persist;
  proto._persist = function _persist(entry) {
    if (this.persist && this.sessionFile && this.flushed && !existsSync(this.sessionFile)) {
      const fd = openSync(this.sessionFile, "wx");
      try {
        for (const e of this.fileEntries) writeFileSync(fd, `${JSON.stringify(e)}\n`);
      } finally {
        closeSync(fd);
      }
      return;
    }
    return persist.call(this, entry);
  };
}

export const ref = await import(REF_URL);
writeWholeWhereGone(ref);

/**
 * The names every implementation must export: the reference module's own (pi 1.6.0's; from pi 1.5.0
 * on `projectContextEntry` is one). free-functions.test.mjs checks ours (index.js and index.mjs,
 * which write them out) against it.
 */
export const EXPORT_NAMES = Object.keys(ref);
if (REF_KEEPS_FAILED_APPENDS) rollBackFailedAppends(ref);

async function loadOurs() {
  if (SELF) {
    // A query string gives a separate module instance (its own SessionManager class), so sabotage applied to it
    // does not leak into the reference side.
    const self = { ...(await import(`${REF_URL}?diff-self`)) };
    writeWholeWhereGone(self);
    if (REF_KEEPS_FAILED_APPENDS) rollBackFailedAppends(self);
    return self;
  }
  const spec = process.env.DIFF_OURS || "../../index.js";
  const url = new URL(spec, import.meta.url);
  let ns;
  try {
    ns = await import(url.href);
  } catch (error) {
    throw new Error(
      `Cannot load our implementation from ${url.pathname}: ${error?.message ?? error}\n` +
        "Build it first (npm run build), or set DIFF_SELF=1 to run the harness reference-vs-reference.",
    );
  }
  // Node's CJS named-export detection can miss exports assigned dynamically; fall back to require().
  if (typeof ns.SessionManager !== "function" && url.pathname.endsWith(".js")) {
    ns = createRequire(import.meta.url)(url.pathname);
  } else if (typeof ns.SessionManager !== "function" && ns.default) {
    ns = ns.default;
  }
  return { ...ns };
}

export const ours = await loadOurs();

/** [{ name, mod }] in the order they are run: reference first. */
export const IMPLS = [
  { name: "ref", mod: ref },
  { name: SELF ? "ref2" : "ours", mod: ours },
];

/**
 * Runs `fn(ctx)` for each implementation in its own folder `<root>/<label>/<name>`, with its own agent dir
 * there (`PI_CODING_AGENT_DIR`) and a normaliser that knows the folder; returns the results in IMPLS order.
 */
export async function inEachImpl(root, label, fn) {
  const out = [];
  for (const impl of IMPLS) {
    const base = join(root, label, impl.name);
    mkdirSync(base, { recursive: true });
    process.env.PI_CODING_AGENT_DIR = join(base, "agent");
    const norm = new Normalizer().addRoot(base);
    out.push(await fn({ base, norm, mod: impl.mod, SM: impl.mod.SessionManager }));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Sabotage: deliberate, one-at-a-time breakages of the "ours" side, used only to prove the harness can fail.
// ---------------------------------------------------------------------------------------------------------------

function reorderKeys(obj, firstKey) {
  // Move `firstKey` to the end of the object's key order, keeping everything else.
  const value = obj[firstKey];
  delete obj[firstKey];
  obj[firstKey] = value;
}

export const SABOTAGES = {
  /** custom entries get `type` as their last key (in memory and on disk). */
  keyorder(mod) {
    const proto = mod.SessionManager.prototype;
    const orig = proto._appendEntry;
    proto._appendEntry = function (entry) {
      if (entry.type === "custom") reorderKeys(entry, "type");
      return orig.call(this, entry);
    };
  },
  /** branch() to an unknown id throws a slightly different message. */
  message(mod) {
    const proto = mod.SessionManager.prototype;
    const orig = proto.branch;
    proto.branch = function (id) {
      try {
        return orig.call(this, id);
      } catch (error) {
        throw new Error(`${error.message}.`);
      }
    };
  },
  /** getEntry() returns a copy instead of the stored object. */
  identity(mod) {
    const proto = mod.SessionManager.prototype;
    const orig = proto.getEntry;
    proto.getEntry = function (id) {
      const entry = orig.call(this, id);
      return entry && { ...entry };
    };
  },
  /** Undefined-valued keys are dropped from in-memory entries (the file bytes stay the same). */
  undefinedkeys(mod) {
    const proto = mod.SessionManager.prototype;
    const orig = proto._appendEntry;
    proto._appendEntry = function (entry) {
      for (const key of Object.keys(entry)) if (entry[key] === undefined) delete entry[key];
      return orig.call(this, entry);
    };
  },
  /** Messages pass through a JSON round trip before being stored (-0 becomes 0, undefined keys vanish, NaN -> null). */
  jsonroundtrip(mod) {
    const proto = mod.SessionManager.prototype;
    const orig = proto.appendMessage;
    proto.appendMessage = function (message) {
      return orig.call(this, JSON.parse(JSON.stringify(message)));
    };
  },
  /** Appended lines get a trailing space before the newline (file bytes only). */
  bytes(mod) {
    const proto = mod.SessionManager.prototype;
    const orig = proto._persist;
    const { appendFileSync } = createRequire(import.meta.url)("node:fs");
    proto._persist = function (entry) {
      if (this.flushed && this.persist && this.sessionFile) {
        appendFileSync(this.sessionFile, `${JSON.stringify(entry)} \n`);
        return;
      }
      return orig.call(this, entry);
    };
  },
  /** getTree() returns its roots in reverse order. */
  tree(mod) {
    const proto = mod.SessionManager.prototype;
    const orig = proto.getTree;
    proto.getTree = function () {
      return orig.call(this).reverse();
    };
  },
  /** list() swallows its first progress call. */
  listing(mod) {
    const SM = mod.SessionManager;
    const orig = SM.list;
    SM.list = async function (cwd, dir, onProgress, signal) {
      let calls = 0;
      const result = await orig.call(
        this,
        cwd,
        dir,
        onProgress && ((...a) => (++calls > 1 ? onProgress(...a) : undefined)),
        signal,
      );
      return result;
    };
  },
  /** parseSessionEntries() keeps blank-line placeholders (free function sabotage). */
  parse(mod) {
    const orig = mod.parseSessionEntries;
    mod.parseSessionEntries = (content) => {
      const result = orig(content);
      if (content.startsWith("\uFEFF")) result.push(null);
      return result;
    };
  },
  /** getDefaultSessionDir() drops the trailing "--". */
  defaultdir(mod) {
    const orig = mod.getDefaultSessionDir;
    mod.getDefaultSessionDir = (...args) => orig(...args).replace(/--$/, "-");
  },
  /** loadEntriesFromFile() (the export) drops the last entry. */
  load(mod) {
    const orig = mod.loadEntriesFromFile;
    mod.loadEntriesFromFile = (path) => orig(path).slice(0, -1);
  },
  /** Full-file rewrites (migration, createBranchedSession) end lines with CRLF. */
  rewrite(mod) {
    const proto = mod.SessionManager.prototype;
    const { openSync, writeFileSync, closeSync } = createRequire(import.meta.url)("node:fs");
    proto._rewriteFile = function () {
      if (!this.persist || !this.sessionFile) return;
      const fd = openSync(this.sessionFile, "w");
      try {
        for (const entry of this.fileEntries) writeFileSync(fd, `${JSON.stringify(entry)}\r\n`);
      } finally {
        closeSync(fd);
      }
    };
  },
  /** listAll() swaps its first two results. */
  listall(mod) {
    const SM = mod.SessionManager;
    const orig = SM.listAll;
    SM.listAll = async function (...args) {
      const r = await orig.apply(this, args);
      if (r.length > 1) [r[0], r[1]] = [r[1], r[0]];
      return r;
    };
  },
  /** createBranchedSession() stamps re-created label entries with the current time instead of the label's own. */
  labeltime(mod) {
    const proto = mod.SessionManager.prototype;
    const orig = proto.createBranchedSession;
    proto.createBranchedSession = function (leafId) {
      for (const k of this.labelTimestampsById.keys()) this.labelTimestampsById.set(k, new Date().toISOString());
      return orig.call(this, leafId);
    };
  },
  /** The -0 of a compaction's tokensBefore is kept as 0 in memory. */
  negzero(mod) {
    const proto = mod.SessionManager.prototype;
    const orig = proto.appendCompaction;
    proto.appendCompaction = function (summary, first, tokensBefore, ...rest) {
      return orig.call(this, summary, first, Object.is(tokensBefore, -0) ? 0 : tokensBefore, ...rest);
    };
  },
};

function applySabotage(mod, name) {
  const fn = SABOTAGES[name];
  if (!fn) throw new Error(`Unknown DIFF_SABOTAGE=${name}; known: ${Object.keys(SABOTAGES).join(", ")}`);
  fn(mod);
  console.warn(`[diff] SABOTAGE "${name}" applied to the "ours" side: failures are expected.`);
}

if (SELF && SABOTAGE) applySabotage(ours, SABOTAGE);
