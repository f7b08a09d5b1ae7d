// The benchmarked operations. Each one is described once and used three ways:
// the agreement check, the interleaved timing rounds (bench/run.mjs) and the
// peak-RSS child processes (bench/rss-child.mjs).
//
// Shape of an operation:
//   key, label       identifiers for the table and the chart
//   target           ratio reference/ours it should reach (the design targets; 1 = "no slower")
//   floor            "S" | "M" | "L" when it should be compared with reading + parsing that file
//   quick            part of `--quick`
//   rss              measure peak RSS for this family in fresh child processes (rssTarget: ours/ref);
//                    "quick" to measure it in --quick runs too
//   single           impl-independent (the floor): timed once, no ratio
//   setup(impl, D)            once per implementation, untimed -> state
//   prepare(impl, D, st)      before every call, untimed -> x
//   run(impl, D, st, x)       the timed part -> result
//   signature(impl, D, st, x, result)  for the agreement check
//   cleanup(impl, D, st, x, result)    after every call, untimed

import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { contextSig, hashEach, normalizedFileSig, sessionInfosSig, sessionSig, treeSig } from "./agree.mjs";

const APPEND_COUNT = 10_000;

/**
 * The first `n` values `pick` gives for the entries of a session file (undefined: skipped), read in
 * chunks (no full-file string).
 */
function loadFirst(file, n, pick) {
  const out = [];
  const fd = openSync(file, "r");
  const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
  let pending = "";
  try {
    while (out.length < n) {
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      pending += buf.toString("utf8", 0, got);
      let start = 0;
      let nl;
      while (out.length < n && (nl = pending.indexOf("\n", start)) !== -1) {
        const v = pick(JSON.parse(pending.slice(start, nl)));
        if (v !== undefined) out.push(v);
        start = nl + 1;
      }
      pending = pending.slice(start);
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

/** The first `n` messages of a session file. */
export const loadMessages = (file, n) => loadFirst(file, n, (e) => (e.type === "message" ? e.message : undefined));

/** The first `n` entries of a session file (header excluded). */
export const loadEntries = (file, n) => loadFirst(file, n, (e) => (e.type !== "session" ? e : undefined));

let cachedEntries;
let cachedMessages;
function appendMessages(D) {
  cachedMessages ??= loadMessages(D.L.file, APPEND_COUNT);
  return cachedMessages;
}

function tmpDir(D, what) {
  const dir = join(D.tmp, what);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function unlinkQuiet(p) {
  try {
    if (p) unlinkSync(p);
  } catch {}
}

const open = (impl, file, dir) => impl.mod.SessionManager.open(file, dir);

function openOp(size, target) {
  return {
    key: `open-${size}`,
    label: `open(${size})`,
    target,
    floor: size,
    quick: true,
    run: (impl, D) => open(impl, D[size].file),
    signature: (impl, D, st, x, sm) => sessionSig(sm),
  };
}

/**
 * The floor: the whole file as one Buffer, then one JSON.parse per line. Decoding
 * line by line keeps one-byte strings for ASCII lines; one `readFileSync(f, "utf8")`
 * string turns two-byte for the whole file as soon as one character is not Latin-1,
 * which measured slower than the reference's own chunked reader.
 */
function parseLines(buf) {
  const entries = [];
  let start = 0;
  let nl;
  while ((nl = buf.indexOf(10, start)) !== -1) {
    if (nl > start) entries.push(JSON.parse(buf.toString("utf8", start, nl)));
    start = nl + 1;
  }
  if (start < buf.length) entries.push(JSON.parse(buf.toString("utf8", start)));
  return entries;
}

function floorOp(size) {
  return {
    key: `floor-${size}`,
    label: `floor: read + JSON.parse lines (${size})`,
    single: true,
    quick: true,
    rss: size === "L",
    run: (impl, D) => parseLines(readFileSync(D[size].file)),
  };
}

export function defineOps() {
  return [
    floorOp("S"),
    floorOp("M"),
    floorOp("L"),
    {
      key: "floor-folder",
      label: "floor: read + JSON.parse lines (1,000-session folder)",
      single: true,
      quick: false,
      run: (impl, D) => {
        let n = 0;
        for (const f of readdirSync(D.folder.dir)) n += parseLines(readFileSync(join(D.folder.dir, f))).length;
        return n;
      },
    },
    {
      // What any implementation must do per persisted append: JSON.stringify the entry
      // (the bytes must be exactly those) and write it. Ids and timestamps are precomputed
      // and the file is opened once, so this is below what either implementation can do.
      key: "floor-append",
      label: "floor: JSON.stringify + write, 10k entries, one open fd",
      single: true,
      quick: true,
      run: (impl, D) => {
        const file = join(tmpDir(D, "append-floor"), "floor.jsonl");
        const fd = openSync(file, "a");
        try {
          let parentId = null;
          const timestamp = "2026-01-01T00:00:00.000Z";
          for (const [i, message] of appendMessages(D).entries()) {
            const id = i.toString(16).padStart(8, "0");
            writeSync(fd, `${JSON.stringify({ type: "message", id, parentId, timestamp, message })}\n`);
            parentId = id;
          }
        } finally {
          closeSync(fd);
          unlinkSync(file);
        }
      },
    },
    openOp("S", 1),
    openOp("M", 1),
    openOp("L", 8),
    {
      key: "open-L-context",
      label: "open(L) + buildSessionContext()",
      target: 5,
      floor: "L",
      quick: true,
      rss: "quick",
      rssTarget: 0.5,
      run: (impl, D) => {
        const sm = open(impl, D.L.file);
        return { sm, ctx: sm.buildSessionContext() };
      },
      signature: (impl, D, st, x, r) => ({ ...sessionSig(r.sm), ...contextSig(r.ctx) }),
    },
    {
      key: "open-M-entries",
      label: "open(M) + getEntries()",
      target: 1.5,
      floor: "M",
      quick: true,
      rss: true,
      run: (impl, D) => {
        const sm = open(impl, D.M.file);
        const entries = sm.getEntries();
        // Touch every entry so a lazy facade pays for materialising it.
        let n = 0;
        for (const e of entries) if (e.type === "message" && e.message.content) n++;
        return { sm, entries, n };
      },
      signature: (impl, D, st, x, r) => ({
        ...sessionSig(r.sm),
        entries: r.entries.length,
        withContent: r.n,
        entryHashes: hashEach(r.entries),
      }),
    },
    {
      key: "open-M-tree",
      label: "open(M) + getTree()",
      target: 2,
      floor: "M",
      quick: true,
      rss: true,
      run: (impl, D) => {
        const sm = open(impl, D.M.file);
        return { sm, tree: sm.getTree() };
      },
      signature: (impl, D, st, x, r) => ({ ...sessionSig(r.sm), ...treeSig(r.tree) }),
    },
    {
      key: "branch-M",
      label: "getBranch() on open M",
      target: 1,
      quick: true,
      setup: (impl, D) => open(impl, D.M.file),
      run: (impl, D, sm) => sm.getBranch(),
      signature: (impl, D, sm, x, path) => ({
        branchLength: path.length,
        branchIds: path.map((e) => e.id),
        branchHashes: hashEach(path),
      }),
    },
    {
      key: "context-repeat-M",
      label: "buildSessionContext() repeated on open M",
      target: 1,
      quick: true,
      setup: (impl, D) => open(impl, D.M.file),
      run: (impl, D, sm) => sm.buildSessionContext(),
      signature: (impl, D, sm, x, ctx) => contextSig(ctx),
    },
    {
      // The exported free function on the caller's objects: the crossing into the core's context rule.
      key: "context-free",
      label: "buildSessionContext(entries) free, 10k entries",
      target: 1,
      quick: true,
      setup: (impl, D) => {
        cachedEntries ??= loadEntries(D.L.file, 10_000);
        return cachedEntries;
      },
      run: (impl, D, entries) => impl.mod.buildSessionContext(entries),
      signature: (impl, D, entries, x, ctx) => contextSig(ctx),
    },
    {
      key: "context-free-small",
      label: "buildSessionContext(entries) free, 20 entries",
      target: 1,
      quick: true,
      setup: (impl, D) => {
        cachedEntries ??= loadEntries(D.L.file, 10_000);
        return cachedEntries.slice(0, 20);
      },
      run: (impl, D, entries) => impl.mod.buildSessionContext(entries),
      signature: (impl, D, entries, x, ctx) => contextSig(ctx),
    },
    {
      key: "append-persisted",
      label: "10k appendMessage, persisted",
      target: 2,
      floor: "append",
      quick: true,
      rss: true,
      setup: (impl, D) => ({ dir: tmpDir(D, "append"), messages: appendMessages(D) }),
      prepare: (impl, D, st) => impl.mod.SessionManager.create(D.cwd, st.dir),
      run: (impl, D, st, sm) => {
        for (const m of st.messages) sm.appendMessage(m);
        return sm;
      },
      signature: (impl, D, st, sm) => ({
        entryCount: sm.getEntryCount(),
        fileDir: dirname(sm.getSessionFile()),
        ...normalizedFileSig(sm.getSessionFile(), { dropEntryTimestamps: true }),
      }),
      cleanup: (impl, D, st, sm) => unlinkQuiet(sm.getSessionFile()),
    },
    {
      key: "append-memory",
      label: "10k appendMessage, in memory",
      target: 1,
      quick: true,
      setup: (impl, D) => ({ messages: appendMessages(D) }),
      prepare: (impl, D) => impl.mod.SessionManager.inMemory(D.cwd),
      run: (impl, D, st, sm) => {
        for (const m of st.messages) sm.appendMessage(m);
        return sm;
      },
      signature: (impl, D, st, sm) => {
        const entries = sm.getEntries();
        return {
          entryCount: sm.getEntryCount(),
          persisted: sm.isPersisted(),
          file: sm.getSessionFile() ?? null,
          chain: entries.every((e, i) => e.parentId === (i ? entries[i - 1].id : null)),
          messageHashes: hashEach(entries, (e) => JSON.stringify(e.message)),
        };
      },
    },
    {
      key: "list",
      label: "list() over 1,000 sessions, again",
      target: 10,
      quick: true,
      rss: true,
      run: (impl, D) => impl.mod.SessionManager.list(D.cwd, D.folder.dir),
      signature: (impl, D, st, x, infos) => sessionInfosSig(infos),
    },
    {
      key: "list-first",
      label: "list() over 1,000 sessions, nothing cached",
      target: 10,
      quick: true,
      // Ours keeps the rows of unchanged files between calls; forget them, as on the first
      // `/resume` of a process (the reference keeps nothing).
      prepare: (impl) => impl.clearCaches(),
      run: (impl, D) => impl.mod.SessionManager.list(D.cwd, D.folder.dir),
      signature: (impl, D, st, x, infos) => sessionInfosSig(infos),
    },
    {
      key: "listAll",
      label: "listAll() 40 projects, 1,200 sessions",
      target: 10,
      quick: false,
      rss: true,
      run: (impl) => impl.mod.SessionManager.listAll(),
      signature: (impl, D, st, x, infos) => sessionInfosSig(infos),
    },
    {
      key: "continueRecent",
      label: "continueRecent() in the 1,000-session folder",
      target: 3,
      quick: true,
      run: (impl, D) => impl.mod.SessionManager.continueRecent(D.cwd, D.folder.dir),
      signature: (impl, D, st, x, sm) => sessionSig(sm),
    },
    {
      key: "findById",
      label: "findById() ×5 in the 1,000-session folder",
      target: 3,
      quick: true,
      setup: (impl, D) => {
        // Ids at several positions of the directory order the lookups scan, plus one miss.
        const files = readdirSync(D.folder.dir).filter((f) => f.endsWith(".jsonl"));
        const idOf = (f) => f.slice(f.indexOf("_") + 1, -".jsonl".length);
        return [0.1, 0.4, 0.7, 0.999]
          .map((q) => idOf(files[Math.floor(q * files.length)]))
          .concat(["0000-not-a-session"]);
      },
      run: (impl, D, ids) => ids.map((id) => impl.mod.SessionManager.findById(D.cwd, id, D.folder.dir)),
      signature: (impl, D, ids, x, found) => ({ found: found.map((p) => p ?? null) }),
    },
    {
      key: "forkFrom-L",
      label: "forkFrom(L)",
      target: 1,
      floor: "L",
      quick: false,
      rss: true,
      setup: (impl, D) => ({ dir: tmpDir(D, "fork") }),
      run: (impl, D, st) => impl.mod.SessionManager.forkFrom(D.L.file, "/home/dev/src/fork-target", st.dir),
      signature: (impl, D, st, x, sm) => ({
        ...sessionSig(sm),
        sessionId: "(random)",
        headerId: "(random)",
        sessionFile: dirname(sm.getSessionFile()),
        ...normalizedFileSig(sm.getSessionFile()),
      }),
      cleanup: (impl, D, st, x, sm) => unlinkQuiet(sm?.getSessionFile()),
    },
    {
      key: "createBranched-M",
      label: "createBranchedSession() on M",
      target: 1,
      quick: false,
      setup: (impl, D) => ({ dir: tmpDir(D, "branched") }),
      prepare: (impl, D, st) => open(impl, D.M.file, st.dir),
      run: (impl, D, st, sm) => sm.createBranchedSession(D.M.leafId),
      signature: (impl, D, st, sm, file) => ({
        returned: file === sm.getSessionFile(),
        fileDir: dirname(file),
        entryCount: sm.getEntryCount(),
        leafType: sm.getLeafEntry()?.type, // a re-created label's id is random
        ...normalizedFileSig(file),
      }),
      cleanup: (impl, D, st, sm, file) => unlinkQuiet(file),
    },
  ];
}

/** Bench data as seen by the operations (plain JSON, passed to RSS children). */
export function dataContext(data, tmp) {
  return {
    cwd: data.cwd,
    tmp,
    S: data.S && { file: data.S.file, leafId: data.S.leafId, bytes: data.S.bytes, entries: data.S.entries },
    M: data.M && { file: data.M.file, leafId: data.M.leafId, bytes: data.M.bytes, entries: data.M.entries },
    L: data.L && { file: data.L.file, leafId: data.L.leafId, bytes: data.L.bytes, entries: data.L.entries },
    folder: data.folder && { dir: data.folder.dir, count: data.folder.count, bytes: data.folder.bytes },
    agent: data.agent && {
      root: data.agent.root,
      count: data.agent.count,
      bytes: data.agent.bytes,
      projects: data.agent.projects.length,
    },
  };
}
