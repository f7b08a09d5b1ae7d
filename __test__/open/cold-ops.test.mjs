// The first operation on a freshly opened session, alone. Ours parses entries lazily and
// takes shortcuts while nothing is parsed (context plans, tree links, createBranchedSession
// rewriting raw lines); snapshot-style tests call every getter at once and would hide a
// difference on those cold paths. Each (file, operation) pair opens a fresh copy in each
// implementation, runs only that operation, then compares its result and the files.
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { firstRecordDiff } from "../helpers/compare.mjs";
import { writeWalkableCorpus } from "../helpers/cycles.mjs";
import { IMPLS } from "../helpers/impls.mjs";
import { capture, formatDiff, Normalizer } from "../../support/normalize.mjs";
import { snapshotDir } from "../helpers/snapshot.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";
import { generateSession } from "../../support/gen.mjs";

const LABELS = IMPLS.map((i) => i.name);
const root = makeTempRoot("cold");
const src = join(root, "src");

// The adversarial corpus (minus cycles, where the reference hangs) plus realistic generated
// sessions with labels, compactions, branches and context edits.
const FILES = writeWalkableCorpus(src);
for (const seed of [3, 11, 29]) {
  const name = `gen-${seed}.jsonl`;
  generateSession(join(src, name), {
    seed,
    targetBytes: 300 * 1024,
    cwd: "/home/dev/src/cold",
    startMs: Date.UTC(2025, 0, seed),
    compactionEvery: [30, 60],
    branchChance: 0.05,
    minBranches: 1,
    imageChance: 0.05,
  });
  FILES.push(name);
}

const OPS = {
  getEntries: (sm) => sm.getEntries(),
  getTree: (sm) => sm.getTree(),
  getBranch: (sm) => sm.getBranch(),
  buildSessionContext: (sm) => sm.buildSessionContext(),
  buildSessionProjection: (sm) => sm.buildSessionProjection(),
  buildContextEntries: (sm) => sm.buildContextEntries(),
  getLeafEntry: (sm) => sm.getLeafEntry(),
  getHeader: (sm) => sm.getHeader(),
  getSessionName: (sm) => sm.getSessionName(),
  getEntryCount: (sm) => sm.getEntryCount(),
  getChildren: (sm) => sm.getChildren(null),
  createBranchedSession: (sm) => {
    const path = sm.createBranchedSession(sm.getLeafId());
    return { path, entries: sm.getEntries(), header: sm.getHeader(), leaf: sm.getLeafId(), tree: sm.getTree() };
  },
  createBranchedMidway: (sm) => {
    const ids = sm.getBranch().map((e) => e.id);
    const path = sm.createBranchedSession(ids[Math.floor(ids.length / 2)]);
    return { path, entries: sm.getEntries(), context: sm.buildSessionContext() };
  },
  appendThenContext: (sm) => {
    const id = sm.appendMessage({ role: "user", content: "cold append", timestamp: 1 });
    return { id, context: sm.buildSessionContext(), leaf: sm.getLeafEntry() };
  },
  labelFirst: (sm) => {
    const first = sm.getEntries()[0];
    if (!first) return "empty";
    sm.appendLabelChange(first.id, "cold");
    return { label: sm.getLabel(first.id), tree: sm.getTree().length };
  },
};

// DIFF_COLD_OPS=getEntries,getTree runs only those (scripts/arm64.mjs, under emulation).
const ONLY = process.env.DIFF_COLD_OPS?.split(",").filter(Boolean);
for (const op of ONLY ?? [])
  if (!OPS[op]) throw new Error(`DIFF_COLD_OPS: no operation ${op}; known: ${Object.keys(OPS).join(", ")}`);

describe(`first operation after open (${LABELS.join(" vs ")})`, () => {
  for (const [op, run] of Object.entries(OPS).filter(([op]) => !ONLY || ONLY.includes(op))) {
    it(op, () => {
      const problems = [];
      for (const file of FILES) {
        const recs = IMPLS.map((impl) => {
          const dir = join(root, impl.name, op, file.replace(/\W+/g, "_"));
          mkdirSync(dir, { recursive: true });
          cpSync(join(src, file), join(dir, file));
          const norm = new Normalizer().addRoot(dir);
          const r = capture(() => run(impl.mod.SessionManager.open(join(dir, file))));
          // When the operation throws part-way (e.g. JSON.stringify overflowing its stack on
          // 25k-deep nesting), the reference leaves a half-written new file behind; ours writes
          // whole files or nothing (a documented difference). Compare the source file then.
          if ("error" in r) for (const k of readdirSync(dir)) if (k !== file) rmSync(join(dir, k));
          // Ours keeps `<file>.v<N>.bak` when it migrates (a documented addition); compare the rest.
          const files = snapshotDir(dir, norm);
          for (const k of Object.keys(files)) if (/\.v[^/]*\.bak$/.test(k)) delete files[k];
          return { result: "error" in r ? { threw: norm.value(r.error) } : norm.value(r.value), files };
        });
        const d = firstRecordDiff(recs[0], recs[1]);
        if (d) problems.push(`  ${file}: ${formatDiff(d.diff, LABELS)}`);
      }
      if (problems.length)
        throw new Error(`${op}: ${problems.length} file(s) differ\n${problems.slice(0, 5).join("\n")}`);
    });
  }
});
