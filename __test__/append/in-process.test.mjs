// Managers inside one process, compared with the reference on every corpus file:
// - a manager that does not persist (`inMemory`) never writes, even when it is pointed at a
//   file that needs migrating or that it then appends to or branches;
// - two managers on one file each ignore the other's appends, as the reference's do (each
//   keeps its own `fileEntries`), while the file receives every line from both.
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { firstRecordDiff } from "../helpers/compare.mjs";
import { writeWalkableCorpus } from "../helpers/cycles.mjs";
import { IMPLS } from "../helpers/impls.mjs";
import { capture, formatDiff, Normalizer } from "../../support/normalize.mjs";
import { snapshotDir } from "../helpers/snapshot.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const LABELS = IMPLS.map((i) => i.name);
const root = makeTempRoot("in-process");
const src = join(root, "src");
const FILES = writeWalkableCorpus(src);

/**
 * Runs `scenario(mod, file, dir)` on a fresh copy per implementation; compares results and files.
 * `backups`: ours keeps `<file>.v<N>.bak` when a persisting manager migrates (a documented
 * addition), left out of the comparison.
 */
function compareOnCorpus(what, scenario, { backups = false } = {}) {
  const problems = [];
  for (const file of FILES) {
    const recs = IMPLS.map((impl) => {
      const dir = join(root, impl.name, what, file.replace(/\W+/g, "_"));
      mkdirSync(dir, { recursive: true });
      cpSync(join(src, file), join(dir, file));
      const norm = new Normalizer().addRoot(dir);
      const r = capture(() => scenario(impl.mod, join(dir, file), dir));
      const files = snapshotDir(dir, norm);
      if (backups) for (const k of Object.keys(files)) if (/\.v[^/]*\.bak$/.test(k)) delete files[k];
      return { result: "error" in r ? { threw: norm.value(r.error) } : norm.value(r.value), files };
    });
    const d = firstRecordDiff(recs[0], recs[1]);
    if (d) problems.push(`  ${file}: ${formatDiff(d.diff, LABELS)}`);
  }
  if (problems.length)
    throw new Error(`${what}: ${problems.length} file(s) differ\n${problems.slice(0, 5).join("\n")}`);
}

/** Each step's result or thrown error, so one failing step does not hide the rest. */
function steps(fns) {
  return fns.map((fn) => {
    const r = capture(fn);
    return "error" in r ? { threw: r.error } : r.value;
  });
}

describe(`managers that do not persist never write (${LABELS.join(" vs ")})`, () => {
  it("inMemory + setSessionFile, then appends, labels, a branch and a context", () => {
    compareOnCorpus("inmemory", (mod, file, dir) => {
      const sm = mod.SessionManager.inMemory(dir);
      sm.setSessionFile(file);
      return steps([
        () => sm.getEntries(),
        () => sm.getHeader(),
        () => sm.appendMessage({ role: "user", content: "in memory", timestamp: 1 }),
        () => sm.appendLabelChange(sm.getLeafId(), "mem"),
        () => sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 }),
        () => sm.appendCompaction("summary", sm.getLeafId(), 10),
        () => sm.createBranchedSession(sm.getLeafId()),
        () => sm.getEntries(),
        () => sm.buildSessionContext(),
        () => sm.getSessionFile(),
      ]);
    });
  });
});

describe(`two managers on one file in one process (${LABELS.join(" vs ")})`, () => {
  it("each keeps its own entries; the file gets every line", () => {
    compareOnCorpus(
      "two-managers",
      (mod, file) => {
        const a = mod.SessionManager.open(file);
        const b = mod.SessionManager.open(file);
        const out = steps([
          () => a.appendMessage({ role: "user", content: "from a", timestamp: 1 }),
          () => b.appendMessage({ role: "user", content: "from b", timestamp: 2 }),
          () => a.appendLabelChange(a.getLeafId(), "a-label"),
          () => b.appendMessage({ role: "assistant", content: [{ type: "text", text: "b again" }], timestamp: 3 }),
          () => a.appendSessionInfo("named by a"),
          () => b.getSessionName(),
        ]);
        const view = (sm) =>
          steps([() => sm.getEntries(), () => sm.getTree(), () => sm.getLeafId(), () => sm.buildSessionContext()]);
        return { out, a: view(a), b: view(b), reopened: view(mod.SessionManager.open(file)) };
      },
      { backups: true },
    );
  });
});
