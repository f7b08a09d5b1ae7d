// `createBranchedSession` on paths that exercise its rule (the core's `branch::plan`): labels on the
// path and after it, a compaction whose `firstKeptEntryId` names a label (the entry after it counts),
// itself, or an entry off the path, labels of targets off the path, labels cleared and set again,
// ids that are not strings. Each case runs three ways, each against the reference:
// - in memory (`inMemory(cwd, undefined, entries)`): the objects are copied by the plan;
// - persisted, opened and materialised first (`getEntries()`): the objects are copied, then written;
// - persisted, opened and branched at once: the core writes the bytes where it can.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { deepDiff, formatDiff, Normalizer } from "../../support/normalize.mjs";
import { IMPLS } from "../helpers/impls.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const LABELS = IMPLS.map((i) => i.name);
const root = makeTempRoot("branch-plan");
const T = "2026-01-01T00:00:00.000Z";
const header = { type: "session", version: 3, id: "s1", timestamp: T, cwd: "/tmp/pi-diff-cwd/project-a" };
const msg = (id, parentId, role = "user") => ({
  type: "message",
  id,
  parentId,
  timestamp: T,
  message: { role, content: [{ type: "text", text: `m ${id}` }], timestamp: 1 },
});
const label = (id, parentId, targetId, text, timestamp = T) => ({
  type: "label",
  id,
  parentId,
  timestamp,
  targetId,
  label: text,
});
const compaction = (id, parentId, firstKeptEntryId) => ({
  type: "compaction",
  id,
  parentId,
  timestamp: T,
  summary: "s",
  firstKeptEntryId,
  tokensBefore: 1,
});

/** name -> [entries, leaf ids to branch from]. */
const CASES = {
  "labels on and after the path, compactions naming labels and themselves": [
    [
      header,
      msg("a", null),
      label("l1", "a", "a", "first", "2026-01-01T00:00:01.000Z"),
      msg("b", "l1", "assistant"),
      compaction("c", "b", "l1"),
      label("l2", "c", "zz", "off path"),
      label("l3", "l2", "c", "on c"),
      compaction("d", "l3", "l3"),
      compaction("e", "d", "e"),
      compaction("f", "e", "a"),
      label("l4", "f", "b", "late"),
      label("l5", "l4", "a", "again", "2026-01-01T00:00:02.000Z"),
    ],
    ["l5", "f", "d", "b", "l1", "nope"],
  ],
  "labels cleared and set again, a side branch, pending labels at the leaf": [
    [
      header,
      msg("a", null),
      label("l1", "a", "a", "x"),
      label("l2", "l1", "a", ""),
      msg("b", "l2", "assistant"),
      label("l3", "b", "a", "y"),
      label("l4", "l3", "b", "z"),
      msg("side", "a", "assistant"),
      label("l5", "side", "side", "s"),
      compaction("c", "l4", "l4"),
      label("l6", "c", "c", "w"),
    ],
    ["l6", "c", "l4", "side", "l5"],
  ],
  "ids that are not strings, a -0 target, a compaction without firstKeptEntryId": [
    [
      header,
      msg(0, null),
      label(7, 0, -0, "zero"),
      msg("b", 7, "assistant"),
      compaction(8, "b", 7),
      { type: "compaction", id: "n", parentId: 8, timestamp: T, summary: "s", tokensBefore: 1 },
      label("l", "n", 8, "eight"),
    ],
    ["l", "n", 8],
  ],
};

/** The reference's and our results of `run(mod, dir)`, normalised, compared. */
function compare(what, run) {
  const recs = IMPLS.map((impl) => {
    const dir = join(root, impl.name, what.replace(/\W+/g, "_"));
    mkdirSync(dir, { recursive: true });
    const norm = new Normalizer().addRoot(dir);
    return norm.value(run(impl.mod, dir));
  });
  const d = deepDiff(recs[0], recs[1]);
  if (d) throw new Error(`${what}: ${formatDiff(d, LABELS)}`);
}

/** Each step's result or thrown message. */
function attempt(fn) {
  try {
    return fn();
  } catch (error) {
    return { threw: String(error?.message) };
  }
}

const copy = (entries) => structuredClone(entries);
const jsonl = (entries) => entries.map((e) => `${JSON.stringify(e)}\n`).join("");

describe(`createBranchedSession's rule (${LABELS.join(" vs ")})`, () => {
  for (const [name, [entries, leaves]] of Object.entries(CASES)) {
    it(`${name}: in memory`, () => {
      compare(`mem ${name}`, (mod) =>
        leaves.map((leaf) => {
          const sm = mod.SessionManager.inMemory("/tmp/pi-diff-cwd/project-a", undefined, copy(entries));
          const r = attempt(() => sm.createBranchedSession(leaf));
          return { r, entries: sm.getEntries(), leaf: sm.getLeafId(), tree: sm.getTree() };
        }),
      );
    });

    for (const materialise of [true, false]) {
      it(`${name}: persisted, ${materialise ? "objects materialised" : "bytes"}`, () => {
        compare(`file ${materialise} ${name}`, (mod, dir) =>
          leaves.map((leaf, i) => {
            const file = join(dir, `s${i}.jsonl`);
            writeFileSync(file, jsonl(entries));
            const sm = mod.SessionManager.open(file, dir);
            if (materialise) sm.getEntries();
            const r = attempt(() => sm.createBranchedSession(leaf));
            const out = sm.getSessionFile();
            const bytes = out !== file && typeof r === "string" ? attempt(() => readFileSync(out, "latin1")) : null;
            return { r, bytes, entries: sm.getEntries(), leaf: sm.getLeafId() };
          }),
        );
      });
    }
  }
});
