// Differential test over an adversarial corpus of session files (generated at test time into a temp dir).
//
// For every file, on each implementation, with its own copy (open() may migrate or repair files):
//   loadEntriesFromFile, parseSessionEntries(content), SessionManager.open (+ an append, createBranchedSession,
//   reopen), open with a cwd override, setSessionFile, forkFrom -- comparing return values or thrown errors, every
//   getter, identity relations, and the bytes of every file afterwards.
// Then discovery and listing over one folder holding the whole corpus: findMostRecentSession, findById, list,
// listAll (Date values, order, progress callback sequences), continueRecent.
//
// Files whose parent chain has a cycle make the reference hang on path walks; the harness skips those getters on
// both sides (see refHazards), and a separate, clearly marked ours-only test checks that ours throws instead.
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalTies, firstRecordDiff } from "../helpers/compare.mjs";
import { CWD, corpus, cycleFile, FILE_URL_CWD, SID } from "../helpers/corpus.mjs";
import { IMPLS, ours, SELF } from "../helpers/impls.mjs";
import { capture, captureAsync, formatDiff, Normalizer, normCapture } from "../../support/normalize.mjs";
import { refHazards, snapshotDir, snapshotManager } from "../helpers/snapshot.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const LABELS = IMPLS.map((i) => i.name);
const FILES = corpus();
const root = makeTempRoot("files");

const slug = (name) => name.replace(/\.jsonl$/, "").replace(/[^\w.-]/g, "_");

function snap(norm, sm) {
  const n = (() => {
    try {
      return sm.getEntryCount();
    } catch {
      return 0;
    }
  })();
  const s = snapshotManager(sm, { perId: n > 200 ? 12 : "all" });
  return { state: norm.value(s.values), identity: s.ident, hazards: s.hazards };
}

/**
 * DESIGN §5: ours keeps a backup `<file>.v<version>.bak` when it migrates a file; the reference keeps none.
 * Backups are taken out of directory snapshots; their bytes must equal the original file's, and they may only
 * appear where the file was actually migrated (checked by comparing `backupCheck` between the two sides:
 * "migrated" on the reference means its file bytes changed on open).
 */
function stripBackups(files, norm, file, rec, key) {
  const original = file.bytes;
  const originalText = norm.text(original.toString("latin1"));
  // did this check leave the corpus file itself with other bytes than it started with?
  const own = norm.str(file.name);
  (rec.rewritten ??= {})[key] = own in files ? files[own] !== originalText : "n/a";
  for (const name of Object.keys(files)) {
    if (!/\.v[^/]*\.bak$/.test(name)) continue;
    const ok = files[name] === originalText;
    (rec.backups ??= []).push(`${key}:${name}:${ok ? "equals original" : "DIFFERS FROM ORIGINAL"}`);
    delete files[name];
  }
  return files;
}

/** Run every per-file check on one implementation; returns a flat record of normalised results. */
function fileChecks(impl, file) {
  const { mod } = impl;
  const SM = mod.SessionManager;
  const base = join(root, impl.name, slug(file.name));
  const norm = new Normalizer().addRoot(base);
  process.env.PI_CODING_AGENT_DIR = join(base, "agent");
  const place = (sub) => {
    const dir = join(base, sub);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, file.name);
    writeFileSync(path, file.bytes);
    return { dir, path };
  };
  const rec = {};
  const dirSnap = (dir, key) => stripBackups(snapshotDir(dir, norm), norm, file, rec, key);

  // loadEntriesFromFile (may append a missing final newline)
  {
    const { dir, path } = place("load");
    rec.load = normCapture(
      norm,
      capture(() => mod.loadEntriesFromFile(path)),
    );
    rec.loadFiles = dirSnap(dir, "loadFiles");
  }
  // parseSessionEntries on the file's text
  rec.parse = normCapture(
    norm,
    capture(() => mod.parseSessionEntries(file.bytes.toString("utf8"))),
  );

  // open, then append, createBranchedSession, reopen
  {
    const { dir, path } = place("open");
    const c = capture(() => SM.open(path));
    rec.open = "error" in c ? normCapture(norm, c) : snap(norm, c.value).state;
    rec.openFiles = dirSnap(dir, "openFiles");
    if (!("error" in c)) {
      const sm = c.value;
      const s0 = snapshotManager(sm, { perId: 0 });
      rec.openIdentity = s0.ident;
      rec.append = normCapture(
        norm,
        capture(() => sm.appendMessage({ role: "user", content: "appended after open", timestamp: 1_700_000_000_000 })),
      );
      rec.afterAppend = snap(norm, sm).state;
      rec.afterAppendFiles = dirSnap(dir, "afterAppendFiles");
      const leaf = (() => {
        try {
          return sm.getLeafId();
        } catch {
          return undefined;
        }
      })();
      if (refHazards(sm.getEntries(), leaf).branchOk(leaf)) {
        rec.branched = normCapture(
          norm,
          capture(() => sm.createBranchedSession(leaf)),
        );
        rec.branchedState = snap(norm, sm).state;
        rec.branchedFiles = dirSnap(dir, "branchedFiles");
      }
      const r = capture(() => SM.open(path));
      rec.reopen = "error" in r ? normCapture(norm, r) : snap(norm, r.value).state;
    }
  }
  // forkFrom into another dir
  {
    const { dir, path } = place("fork");
    const out = join(base, "fork-out");
    const c = capture(() => SM.forkFrom(path, "/tmp/pi-diff-cwd/fork-target", out));
    rec.fork = "error" in c ? normCapture(norm, c) : snap(norm, c.value).state;
    rec.forkFiles = { src: dirSnap(dir, "forkSrc"), out: dirSnap(out, "forkOut") };
  }
  // Files over 1 MiB skip the checks below that only repeat the loading path already covered above.
  if (file.bytes.length > 1024 * 1024) return rec;

  // open with a cwd override (skips header discovery)
  {
    const { dir, path } = place("override");
    const c = capture(() => SM.open(path, join(base, "override-sessions"), "/tmp/pi-diff-cwd/override"));
    rec.openOverride = "error" in c ? normCapture(norm, c) : snap(norm, c.value).state;
    rec.openOverrideFiles = dirSnap(dir, "openOverrideFiles");
  }
  // setSessionFile on a fresh persisted manager
  {
    const { dir, path } = place("set");
    const sm = SM.create(CWD, dir);
    const c = capture(() => sm.setSessionFile(path));
    rec.setSessionFile = normCapture(norm, c);
    rec.setSessionFileState = snap(norm, sm).state;
    rec.setSessionFileFiles = dirSnap(dir, "setSessionFileFiles");
  }
  // inMemory from the loaded entries
  {
    const loaded = capture(() => mod.loadEntriesFromFile(place("mem").path));
    if (!("error" in loaded)) {
      const c = capture(() => SM.inMemory(CWD, undefined, loaded.value));
      rec.inMemory = "error" in c ? normCapture(norm, c) : snap(norm, c.value).state;
    }
  }
  return rec;
}

// Keys that belong to one check: when the reference throws a stack overflow (RangeError from JSON.stringify on
// 25k-deep values) it does not "accept" the input, so that check is not compared (ours may succeed).
const GROUPS = {
  load: ["load", "loadFiles"],
  open: [
    "open",
    "openFiles",
    "openIdentity",
    "append",
    "afterAppend",
    "afterAppendFiles",
    "branched",
    "branchedState",
    "branchedFiles",
    "reopen",
  ],
  branched: ["branched", "branchedState", "branchedFiles"],
  openOverride: ["openOverride", "openOverrideFiles"],
  setSessionFile: ["setSessionFile", "setSessionFileState", "setSessionFileFiles"],
  fork: ["fork", "forkFiles"],
  inMemory: ["inMemory"],
};
const notes = [];

function refStackOverflow(v) {
  const e = v?.threw;
  return e?.name === "RangeError" && /call stack/i.test(e?.message ?? "");
}

function compareAll(recs, what) {
  const [a, b] = recs;
  const problems = [];
  const skip = new Set();
  for (const [key, group] of Object.entries(GROUPS)) {
    if (refStackOverflow(a[key])) {
      for (const k of group) skip.add(k);
      notes.push(
        `${what}: reference overflowed its stack in ${key}(); ${LABELS[1]} ${b[key]?.threw ? `threw ${b[key].threw.name}: ${b[key].threw.message}` : "succeeded"} (not compared)`,
      );
    }
  }
  // migration backups (ours only, by design): must hold the original bytes, and only where the reference rewrote
  skip.add("backups");
  for (const side of [a, b]) {
    for (const bk of side.backups ?? []) {
      const [key, name, status] = bk.split(":");
      if (status !== "equals original" || a.rewritten?.[key] !== true) {
        problems.push(
          `  [backups] ${side === a ? LABELS[0] : LABELS[1]} left ${name} in ${key} (${status}; reference rewrote the file: ${a.rewritten?.[key]})`,
        );
      } else notes.push(`${what}: ${side === a ? LABELS[0] : LABELS[1]} kept migration backup ${name} (${status})`);
    }
  }
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (skip.has(key)) continue;
    const d = firstRecordDiff({ [key]: a[key] }, { [key]: b[key] });
    if (d) problems.push(`  [${key}] ${formatDiff(d.diff, LABELS)}`);
  }
  if (problems.length) throw new Error(`${what}: ${problems.length} difference(s)\n${problems.join("\n")}`);
}

describe(`corpus files (${LABELS.join(" vs ")})`, () => {
  afterAll(() => {
    if (notes.length) console.log(`[files] notes (tolerated, not failures):\n  ${[...new Set(notes)].join("\n  ")}`);
  });
  for (const file of FILES) {
    it(`${file.name}${file.note ? ` (${file.note})` : ""}`, () => {
      const recs = IMPLS.map((impl) => fileChecks(impl, file));
      compareAll(recs, file.name);
    });
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Discovery and listing over a folder holding the whole corpus.
// ---------------------------------------------------------------------------------------------------------------

const MTIME_BASE = 1_650_000_000; // seconds; 2022, outside the normaliser's "now" window

function listingSetup(impl) {
  const base = join(root, impl.name, "_listing");
  const dir = join(base, "all");
  const agent = join(base, "agent");
  mkdirSync(dir, { recursive: true });
  const put = (d, name, bytes, rank) => {
    mkdirSync(d, { recursive: true });
    const p = join(d, name);
    writeFileSync(p, bytes);
    utimesSync(p, MTIME_BASE + rank * 10, MTIME_BASE + rank * 10);
  };
  for (const [i, f] of FILES.entries()) put(dir, f.name, f.bytes, i);
  put(dir, "notes.txt", Buffer.from("not a session\n"), 500);
  put(dir, "UPPER.JSONL", FILES[0].bytes, 501);
  mkdirSync(join(dir, "subdir.jsonl"), { recursive: true });
  // agent dir: two project folders (one is CWD's default dir) for list(cwd) and listAll()
  const norm = new Normalizer().addRoot(base);
  process.env.PI_CODING_AGENT_DIR = agent;
  const defaultDir = impl.mod.getDefaultSessionDir(CWD);
  for (const [i, f] of FILES.slice(0, 20).entries()) put(defaultDir, f.name, f.bytes, 100 + i);
  for (const [i, f] of FILES.slice(20, 45).entries())
    put(join(agent, "sessions", "--other-project--"), f.name, f.bytes, 200 + i);
  return { base, dir, agent, norm };
}

function recorder() {
  const calls = [];
  return {
    calls,
    fn: (loaded, total, partial) =>
      calls.push({ loaded, total, partial: partial === undefined ? undefined : [...partial] }),
  };
}

async function listCall(norm, fn, { exactPartials }) {
  const p = recorder();
  const r = await captureAsync(() => fn(p.fn));
  const atResolve = p.calls.length;
  await new Promise((res) => setTimeout(res, 20));
  return {
    result: normCapture(norm, r),
    progress: p.calls.map((c, i) => [
      c.loaded,
      c.total,
      // a partial list is sorted by `modified`, but sessions with equal `modified` keep the order in which they
      // finished loading (concurrent reads): ties are put in a canonical order before comparing
      c.partial === undefined
        ? "none"
        : exactPartials || i === p.calls.length - 1
          ? canonicalTies(norm.value(c.partial))
          : "some",
    ]),
    callsAtResolve: atResolve,
    callsAfterDelay: p.calls.length,
  };
}

describe(`discovery and listing over the corpus (${LABELS.join(" vs ")})`, () => {
  const setups = IMPLS.map((impl) => ({ impl, ...listingSetup(impl) }));
  const each = async (fn) => {
    const out = [];
    for (const s of setups) {
      process.env.PI_CODING_AGENT_DIR = s.agent;
      out.push(await fn(s, s.impl.mod, s.impl.mod.SessionManager));
    }
    return out;
  };
  const same = (recs, what) =>
    compareAll(
      recs.map((r) => ({ value: r })),
      what,
    );

  it("findMostRecentSession", async () => {
    const recs = await each((s, mod) =>
      s.norm.value([
        capture(() => mod.findMostRecentSession(s.dir)),
        capture(() => mod.findMostRecentSession(s.dir, CWD)),
        capture(() => mod.findMostRecentSession(s.dir, "/other")),
        capture(() => mod.findMostRecentSession(s.dir, "relative/dir")),
        capture(() => mod.findMostRecentSession(s.dir, fileURLToPath(FILE_URL_CWD))),
        capture(() => mod.findMostRecentSession(join(s.dir, "does-not-exist"))),
        capture(() => mod.findMostRecentSession(join(s.dir, "notes.txt"))),
      ]),
    );
    same(recs, "findMostRecentSession");
  });

  it("findById", async () => {
    const ids = [...Array.from({ length: 70 }, (_, i) => SID(i)), "not-a-session-id", ""];
    const recs = await each((s, _mod, SM) =>
      s.norm.value(
        ids.flatMap((id) => [
          capture(() => SM.findById(CWD, id, s.dir)),
          capture(() => SM.findById("/other", id, s.dir)),
          capture(() => SM.findById(CWD, id)),
        ]),
      ),
    );
    same(recs, "findById");
  });

  for (const [name, call, exactPartials] of [
    ["list(CWD, dir)", (s, SM, fn) => SM.list(CWD, s.dir, fn), false],
    ["list('/other', dir)", (s, SM, fn) => SM.list("/other", s.dir, fn), false],
    ["list(CWD) default dir", (s, SM, fn) => SM.list(CWD, undefined, fn), false],
    ["list(CWD, missing dir)", (s, SM, fn) => SM.list(CWD, join(s.dir, "missing"), fn), false],
    ["listAll(dir)", (s, SM, fn) => SM.listAll(s.dir, fn), false],
    ["listAll(progress)", (s, SM, fn) => SM.listAll(fn), false],
    ["listAll() no args", (s, SM) => SM.listAll(), false],
    ["listAll(dir, progress, live signal)", (s, SM, fn) => SM.listAll(s.dir, fn, new AbortController().signal), false],
    ["list with aborted signal", (s, SM, fn) => SM.list(CWD, s.dir, fn, AbortSignal.abort()), true],
    [
      "listAll with aborted signal (reason)",
      (s, SM, fn) => SM.listAll(s.dir, fn, AbortSignal.abort(new Error("custom reason"))),
      true,
    ],
    // not an overload: the reference treats a signal in first position as neither dir nor callback, and ignores it
    ["listAll(abortedSignal) as first argument", (s, SM) => SM.listAll(AbortSignal.abort()), true],
    ["listAll(undefined, abortedSignal)", (s, SM) => SM.listAll(undefined, AbortSignal.abort()), true],
    ["listAll(progress, abortedSignal)", (s, SM, fn) => SM.listAll(fn, AbortSignal.abort()), true],
  ]) {
    it(name, async () => {
      const recs = await each((s, _mod, SM) => listCall(s.norm, (fn) => call(s, SM, fn), { exactPartials }));
      // listAll() without a dir publishes its first partial when candidate 0 finishes: only the last call's
      // partial is deterministic there.
      if (name.startsWith("listAll(progress)"))
        for (const r of recs) r.progress = r.progress.map((c, i, all) => (i < all.length - 1 ? [c[0], c[1], "?"] : c));
      same(recs, name);
    });
  }

  it("continueRecent over the corpus folder", async () => {
    const recs = await each((s, _mod, SM) => {
      const c = capture(() => SM.continueRecent(CWD, s.dir));
      return "error" in c ? normCapture(s.norm, c) : snap(s.norm, c.value).state;
    });
    same(recs, "continueRecent");
  });
});

describe(`listing progress with only valid sessions (${LABELS.join(" vs ")})`, () => {
  // Every file is a valid session with the same cwd, so partial-list lengths are deterministic.
  it("list() and listAll(dir) progress sequences incl. partial lengths", async () => {
    const recs = [];
    for (const impl of IMPLS) {
      const base = join(root, impl.name, "_progress");
      const dir = join(base, "s");
      mkdirSync(dir, { recursive: true });
      const norm = new Normalizer().addRoot(base);
      for (let i = 0; i < 25; i++) {
        const p = join(dir, `2024-01-0${1 + (i % 9)}T00-00-00-000Z_${SID(100 + i)}.jsonl`);
        writeFileSync(
          p,
          `${JSON.stringify({ type: "session", version: 3, id: SID(100 + i), timestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(), cwd: CWD })}\n` +
            `${JSON.stringify({ type: "message", id: "b0000001", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", message: { role: "user", content: `hello ${i}`, timestamp: 1_704_067_200_000 + (i % 7) * 1000 } })}\n`,
        );
        utimesSync(p, MTIME_BASE + i, MTIME_BASE + i);
      }
      process.env.PI_CODING_AGENT_DIR = join(base, "agent");
      const shape = (r) => ({ ...r, progress: r.progress.map(([l, t, p]) => [l, t, Array.isArray(p) ? p.length : p]) });
      recs.push({
        list: shape(await listCall(norm, (fn) => impl.mod.SessionManager.list(CWD, dir, fn), { exactPartials: true })),
        listAll: shape(await listCall(norm, (fn) => impl.mod.SessionManager.listAll(dir, fn), { exactPartials: true })),
      });
    }
    compareAll(recs, "progress");
  });
});

// ---------------------------------------------------------------------------------------------------------------
// OURS-ONLY (not differential): a parent-chain cycle. The reference loops forever on getBranch() and context
// building here; ours must throw an Error instead of hanging. Skipped with DIFF_SELF=1 (the reference would hang).
// ---------------------------------------------------------------------------------------------------------------

describe.skipIf(SELF)("OURS ONLY: parent-chain cycles throw instead of hanging", () => {
  it("getBranch() and buildSessionContext() on a 2-entry cycle throw an Error", () => {
    const dir = join(root, "ours-cycle");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "cycle.jsonl");
    writeFileSync(path, cycleFile());
    const sm = ours.SessionManager.open(path);
    expect(() => sm.getBranch()).toThrow(Error);
    expect(() => sm.buildSessionContext()).toThrow(Error);
    expect(() => sm.buildSessionProjection()).toThrow(Error);
    expect(() => sm.buildContextEntries()).toThrow(Error);
    // getTree() terminates on cycles in the reference too (neither entry is a root): it must not hang here either
    expect(Array.isArray(sm.getTree())).toBe(true);
    const entries = sm.getEntries();
    expect(() => ours.buildSessionContext(entries)).toThrow(Error);
    expect(() => ours.buildSessionContext(entries, entries[0].id)).toThrow(Error);
  });

  it("a self-parented leaf throws too", () => {
    const entries = [
      {
        type: "message",
        id: "c0000001",
        parentId: "c0000001",
        timestamp: "2024-01-01T00:00:00.000Z",
        message: { role: "user", content: "x", timestamp: 1 },
      },
    ];
    expect(() => ours.buildSessionContext(entries)).toThrow(Error);
    const sm = ours.SessionManager.inMemory(CWD, undefined, entries);
    expect(() => sm.getBranch()).toThrow(Error);
  });
});
