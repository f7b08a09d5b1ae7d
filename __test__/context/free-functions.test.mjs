// Differential tests of the exported free functions, on generated entry arrays and crafted inputs.
// Inputs are generated once and structuredClone()d per implementation. Identity tokens record which input object
// every returned object is (E3 = entries[3], E3.message = its message, ...), so "returns the caller's objects"
// is compared too.
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { firstRecordDiff } from "../helpers/compare.mjs";
import { randomEntries, v1Array, v2Array } from "../helpers/entries.mjs";
import { buildRegistry, identityTokens } from "../helpers/identity.mjs";
import { EXPORT_NAMES, IMPLS, ours, REF_VERSION, ref, SELF } from "../helpers/impls.mjs";
import { capture, formatDiff, Normalizer, normCapture } from "../../support/normalize.mjs";
import { Rng } from "../helpers/prng.mjs";
import { refHazards, snapshotDir } from "../helpers/snapshot.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const LABELS = IMPLS.map((i) => i.name);
const SEEDS = Number(process.env.DIFF_FREE_SEEDS ?? 150);
const root = makeTempRoot("free");

/** Run fn(impl, norm) on each implementation and compare the (already normalised) records. */
function diffEach(what, fn) {
  const recs = IMPLS.map((impl) => fn(impl, new Normalizer().addRoot(join(root, impl.name))));
  const problems = [];
  for (const key of Object.keys(recs[0])) {
    const d = firstRecordDiff({ [key]: recs[0][key] }, { [key]: recs[1][key] });
    if (d) problems.push(`  [${key}] ${formatDiff(d.diff, LABELS)}`);
  }
  if (problems.length) throw new Error(`${what}: ${problems.length} difference(s)\n${problems.join("\n")}`);
}

/** normalised result + identity tokens against the caller's input objects */
function callRec(norm, reg, fn) {
  const c = capture(fn);
  const out = normCapture(norm, c);
  if (!("error" in c) && c.value && typeof c.value === "object") out.identity = identityTokens(c.value, reg);
  return out;
}

describe(`exports (${LABELS.join(" vs ")})`, () => {
  it("same export names, kinds and CURRENT_SESSION_VERSION", () => {
    diffEach("exports", (impl) => ({
      names: EXPORT_NAMES.map((n) => [n, typeof impl.mod[n]]),
      version: impl.mod.CURRENT_SESSION_VERSION,
      staticMethods: Object.getOwnPropertyNames(impl.mod.SessionManager)
        .filter((n) => typeof impl.mod.SessionManager[n] === "function")
        .sort(),
      publicMethods: Object.getOwnPropertyNames(impl.mod.SessionManager.prototype)
        .filter((n) => n !== "constructor" && (!n.startsWith("_") || n === "_persist"))
        .sort(),
    }));
  });

  it("function arity (Function.length) of exports and methods", () => {
    diffEach("arity", (impl) => {
      const SM = impl.mod.SessionManager;
      const fns = EXPORT_NAMES.filter((n) => typeof impl.mod[n] === "function" && n !== "SessionManager").map((n) => [
        n,
        impl.mod[n].length,
      ]);
      const statics = ["create", "open", "continueRecent", "inMemory", "forkFrom", "findById", "list", "listAll"].map(
        (n) => [n, SM[n]?.length],
      );
      const methods = Object.getOwnPropertyNames(SM.prototype)
        .filter((n) => n !== "constructor" && !n.startsWith("_"))
        .sort()
        // ours' appendCompaction takes a 7th argument (retainedTail, a documented superset): 7 counts as 6
        .map((n) => [n, n === "appendCompaction" && SM.prototype[n]?.length === 7 ? 6 : SM.prototype[n]?.length]);
      return { fns, statics, methods };
    });
  });

  it("the export list is the reference release's own (Object.keys of its module and of ours' CommonJS entry)", () => {
    const names = [...EXPORT_NAMES].sort();
    expect(Object.keys(ref).sort(), `pi ${REF_VERSION}'s exports`).toEqual(names);
    // ours: the CommonJS object itself (an ES import of index.js lists what Node's lexer finds in it)
    const mine = SELF ? ours : createRequire(import.meta.url)("../../index.js");
    expect(Object.keys(mine).sort(), `ours' exports (profile of pi ${REF_VERSION})`).toEqual(names);
  });

  it.skipIf(SELF)("index.mjs exports the same objects as index.js", async () => {
    const esm = await import(new URL("../../index.mjs", import.meta.url).href);
    for (const n of EXPORT_NAMES) expect(esm[n], n).toBe(ours[n]);
  });
});

describe(`context building on random entry arrays (${LABELS.join(" vs ")})`, () => {
  for (let seed = 1; seed <= SEEDS; seed++) {
    it(`seed ${seed}`, () => {
      const rng = new Rng(seed * 7919);
      const entries = randomEntries(rng, rng.range(0, 30));
      const pick = () => (entries.length ? entries[rng.int(entries.length)].id : "none");
      const leafIds = [
        ["omitted"],
        ["undefined", undefined],
        ["null", null],
        ["unknown", "zzzzzzzz"],
        ["empty", ""],
        ["valid", pick()],
        ["valid2", pick()],
      ];
      const byIdModes = ["omitted", "full", "partial"];
      const partialCut = rng.float();
      diffEach(`seed ${seed}`, (impl, norm) => {
        const m = impl.mod;
        const es = structuredClone(entries);
        const reg = buildRegistry(es, null);
        const rec = {};
        const full = new Map(es.map((e) => [e.id, e]));
        const partial = new Map(es.filter((_, i) => i / es.length < partialCut).map((e) => [e.id, e]));
        for (const [leafName, leafId] of leafIds) {
          // the reference loops forever on a parent cycle: skip those (none are generated, but be safe)
          if (!refHazards(es, leafId).path) continue;
          for (const mode of byIdModes) {
            const args =
              leafName === "omitted"
                ? [es]
                : mode === "omitted"
                  ? [es, leafId]
                  : [es, leafId, mode === "full" ? full : partial];
            if (leafName === "omitted" && mode !== "omitted") continue;
            for (const fn of ["buildContextEntries", "buildSessionProjection", "buildSessionContext"]) {
              rec[`${fn}(${leafName},${mode})`] = callRec(norm, reg, () => m[fn](...args));
            }
          }
        }
        rec.getLatestCompactionEntry = callRec(norm, reg, () => m.getLatestCompactionEntry(es));
        rec.getLatestCompactionEntryEmpty = callRec(norm, reg, () => m.getLatestCompactionEntry([]));
        rec.sessionEntryToContextMessages = es.map((e) => callRec(norm, reg, () => m.sessionEntryToContextMessages(e)));
        const edits = [
          undefined,
          {
            type: "context_edit",
            id: "x",
            parentId: null,
            timestamp: "2023-01-01T00:00:00.000Z",
            targetId: "t",
            replacement: null,
          },
          {
            type: "context_edit",
            id: "x",
            parentId: null,
            timestamp: "2023-01-01T00:00:00.000Z",
            targetId: "t",
            replacement: { content: "string edit" },
          },
          {
            type: "context_edit",
            id: "x",
            parentId: null,
            timestamp: "2023-01-01T00:00:00.000Z",
            targetId: "t",
            replacement: { content: [{ type: "text", text: "block edit" }] },
          },
          {
            type: "context_edit",
            id: "x",
            parentId: null,
            timestamp: "2023-01-01T00:00:00.000Z",
            targetId: "t",
            replacement: {},
          },
          ...es.filter((e) => e.type === "context_edit"),
        ];
        const editReg = buildRegistry([...es, ...edits.filter(Boolean).filter((e) => !es.includes(e))], null);
        // an export from pi 1.5.0 on
        if (EXPORT_NAMES.includes("projectContextEntry")) {
          rec.projectContextEntry = es.map((e) =>
            edits.map((ed) => callRec(norm, editReg, () => m.projectContextEntry(e, ed))),
          );
        }
        rec.inputAfter = norm.value(es); // no function may mutate its input
        return rec;
      });
    });
  }
});

describe(`migrateSessionEntries (${LABELS.join(" vs ")})`, () => {
  for (let seed = 1; seed <= 40; seed++) {
    it(`seed ${seed}`, () => {
      const rng = new Rng(seed * 104729);
      const arrays = {
        v1: v1Array(rng, rng.range(0, 12)),
        v2: v2Array(rng, rng.range(0, 12)),
        v3: randomEntries(rng, 5),
      };
      arrays.v3.unshift({
        type: "session",
        version: 3,
        id: "0190bbbb-0000-7000-8000-000000000003",
        timestamp: "2023-06-01T00:00:00.000Z",
        cwd: "/x",
      });
      arrays.noHeader = randomEntries(rng, 4).map(({ id, parentId, ...e }) => e);
      diffEach(`seed ${seed}`, (impl, norm) => {
        const rec = {};
        for (const [name, input] of Object.entries(arrays)) {
          const es = structuredClone(input);
          const reg = buildRegistry(es, null, 0); // only the entry objects themselves
          const before = [...es];
          rec[name] = normCapture(
            norm,
            capture(() => impl.mod.migrateSessionEntries(es)),
          );
          rec[`${name}:after`] = norm.value(es); // migrated in place, new ids normalised by first appearance
          rec[`${name}:sameObjects`] = es.map((e, i) => (before[i] === e ? identityTokens(e, reg)[0] : "replaced"));
        }
        return rec;
      });
    });
  }
});

describe(`migrateSessionEntries on odd input (${LABELS.join(" vs ")})`, () => {
  const H = (version) => ({ type: "session", ...(version === undefined ? {} : { version }), id: "h", cwd: "/x" });
  const msg = (role, extra = {}) => ({ type: "message", ...extra, message: { role, content: "c" } });
  const compaction = (firstKeptEntryIndex) => ({
    type: "compaction",
    summary: "s",
    firstKeptEntryIndex,
    tokensBefore: 1,
  });
  const body = () => [
    msg("user"),
    msg("hookMessage", { id: "kept", parentId: "x" }),
    compaction(1),
    compaction(-0),
    compaction(0),
    compaction(1.5),
    compaction(-1),
    compaction("1"),
    compaction(Number.NaN),
    compaction(9),
    compaction(10),
    compaction(99),
    { type: "custom", id: "old", timestamp: "t" },
    { type: "compaction", summary: "no index" },
  ];
  const cases = {
    v1: () => [H(1), ...body()],
    noVersion: () => [H(), ...body()],
    v2: () => [H(2), ...body()],
    v3: () => [H(3), ...body()],
    stringVersions: () => [H(" 1 "), ...body()],
    emptyString: () => [H(""), ...body()],
    trueVersion: () => [H(true), ...body()],
    arrayVersion: () => [H([2]), ...body()],
    nanVersion: () => [H("abc"), ...body()],
    fractional: () => [H(2.5), ...body()],
    nullVersion: () => [H(null), ...body()],
    twoHeaders: () => [H(1), msg("user"), H(7), msg("hookMessage")],
    headerLate: () => [msg("user"), compaction(2), H(1), msg("hookMessage")],
    nullPartWay: () => [H(1), msg("user"), compaction(3), null, msg("user")],
    nullPartWayV2: () => [H(2), msg("hookMessage"), null, msg("hookMessage")],
    falsyEntry: () => [H(1), msg("user"), compaction(3), 0, msg("user")],
    falsyTarget: () => [H(2), msg("hookMessage"), 0, ""],
  };
  it("versions, indexes, nulls and headers as the reference reads them", () => {
    diffEach("odd", (impl, norm) => {
      const rec = {};
      for (const [name, make] of Object.entries(cases)) {
        const es = make();
        rec[name] = normCapture(
          norm,
          capture(() => impl.mod.migrateSessionEntries(es)),
        );
        rec[`${name}:after`] = norm.value(es);
      }
      return rec;
    });
  });
});

describe(`parseSessionEntries (${LABELS.join(" vs ")})`, () => {
  const H = JSON.stringify({
    type: "session",
    version: 3,
    id: "0190cccc-0000-7000-8000-000000000001",
    timestamp: "2023-06-01T00:00:00.000Z",
    cwd: "/x",
  });
  const M = JSON.stringify({
    type: "message",
    id: "f0000001",
    parentId: null,
    timestamp: "2023-06-01T00:00:01.000Z",
    message: { role: "user", content: "hi", timestamp: 1 },
  });
  const inputs = {
    empty: "",
    newline: "\n",
    spaces: "   \n\t\n  ",
    plain: `${H}\n${M}\n`,
    noTrailingNewline: `${H}\n${M}`,
    leadingBOM: `\uFEFF${H}\n${M}\n`,
    loneBOMLine: `\uFEFF\n${H}\n${M}\n`,
    midBOM: `${H}\n\uFEFF${M}\n`,
    leadingWhitespace: `  \n\n\t ${H}\n${M}\n`,
    leadingNBSP: `\u00a0${H}\n\u00a0${M}\n`,
    crlf: `${H}\r\n${M}\r\n`,
    crOnly: `${H}\r${M}\r`,
    trailingSpaces: `${H}   \n${M}\t\t\n   `,
    blankLines: `\n\n${H}\n\n\n${M}\n\n`,
    u2028: `\u2028${H}\u2028\n${M}\n`,
    primitives: `${H}\nnull\n0\n[]\n"str"\ntrue\nfalse\n1\n{}\n""\n${M}\n`,
    malformed: `${H}\n{\nnot json\n${M}\n{"a":1} x\n`,
    dupKeys: '{"a":1,"b":2,"a":3,"2":0,"1":1}\n',
    numbers: '{"a":1.0,"b":1e2,"c":-0,"d":1E400,"e":123456789012345678901234567890,"f":5e-324}\n',
    escapes: '{"a":"\\ud800","b":"\\uDC00","c":"\\u0041","d":"\\/"}\n',
    deep: `${"[".repeat(5000)}${"]".repeat(5000)}\n${M}\n`,
    loneSurrogateRaw: `{"a":"\ud800"}\n`,
    nul: `${H}\n\u0000\n${M}\n`,
  };
  it("crafted strings", () => {
    diffEach("parseSessionEntries", (impl, norm) =>
      Object.fromEntries(
        Object.entries(inputs).map(([k, v]) => [
          k,
          normCapture(
            norm,
            capture(() => impl.mod.parseSessionEntries(v)),
          ),
        ]),
      ),
    );
  });
  it("random serialized sessions", () => {
    const rng = new Rng(4242);
    for (let i = 0; i < 30; i++) {
      const entries = randomEntries(rng, rng.range(1, 15));
      const sep = rng.pick(["\n", "\r\n", "\n\n"]);
      const text = `${rng.pick(["", "\uFEFF", "  \n"])}${entries.map((e) => JSON.stringify(e)).join(sep)}${rng.pick(["", "\n", "   "])}`;
      diffEach(`random ${i}`, (impl, norm) => ({
        parsed: normCapture(
          norm,
          capture(() => impl.mod.parseSessionEntries(text)),
        ),
      }));
    }
  });
});

describe(`assertValidSessionId (${LABELS.join(" vs ")})`, () => {
  const good = ["a", "A1", "abc-def", "a.b_c-d", "01a22d64-b21f-7724-ae13-b3ab3cf3dd5b", "x".repeat(1000), "9"];
  const bad = [
    "",
    "-a",
    "a-",
    ".a",
    "a.",
    "_a",
    "a_",
    "a b",
    "a/b",
    "a\\b",
    "ü",
    "a\n",
    "\na",
    "a\u0000",
    "😀",
    " a",
    "a ",
    "a..b/",
  ];
  it("string ids", () => {
    diffEach("assertValidSessionId", (impl, norm) =>
      Object.fromEntries(
        [...good, ...bad].map((id) => [
          JSON.stringify(id),
          normCapture(
            norm,
            capture(() => impl.mod.assertValidSessionId(id)),
          ),
        ]),
      ),
    );
  });
  it("non-string ids (the reference's regex coerces them to strings)", () => {
    const odd = [5, null, undefined, true, 1.5, ["ab"], { toString: () => "ok" }];
    diffEach("assertValidSessionId(non-string)", (impl, norm) =>
      Object.fromEntries(
        odd.map((id, i) => [
          String(i),
          normCapture(
            norm,
            capture(() => impl.mod.assertValidSessionId(id)),
          ),
        ]),
      ),
    );
  });
});

describe(`getDefaultSessionDir (${LABELS.join(" vs ")})`, () => {
  const cwds = [
    "/a/b",
    "/",
    "/trailing/slash/",
    "relative/dir",
    "./dot/../x",
    "",
    "~",
    "~/proj",
    "/tmp/pi-diff-cwd/uni ü 😀",
    "C:\\Users\\x",
    "/a:b\\c",
    "file:///tmp/pi-diff-cwd/url%20dir",
    "//double//slashes",
    "/tmp/pi-diff-cwd/lone \ud800 surrogate",
  ];
  it("with PI_CODING_AGENT_DIR set to a temp dir (and the dirs it creates)", () => {
    diffEach("getDefaultSessionDir", (impl, norm) => {
      const agent = join(root, impl.name, "agent");
      mkdirSync(agent, { recursive: true });
      const saved = process.env.PI_CODING_AGENT_DIR;
      process.env.PI_CODING_AGENT_DIR = agent;
      try {
        const rec = Object.fromEntries(
          cwds.map((c) => [
            JSON.stringify(c),
            normCapture(
              norm,
              capture(() => impl.mod.getDefaultSessionDir(c)),
            ),
          ]),
        );
        rec.created = snapshotDir(agent, norm);
        return rec;
      } finally {
        process.env.PI_CODING_AGENT_DIR = saved;
      }
    });
  });
  it("with an explicit agentDir argument", () => {
    diffEach("getDefaultSessionDir(cwd, agentDir)", (impl, norm) => {
      const agent = join(root, impl.name, "explicit");
      const rec = Object.fromEntries(
        cwds.flatMap((c) => [
          [
            `${c}|abs`,
            normCapture(
              norm,
              capture(() => impl.mod.getDefaultSessionDir(c, agent)),
            ),
          ],
          [
            `${c}|url`,
            normCapture(
              norm,
              capture(() => impl.mod.getDefaultSessionDir(c, `file://${agent}-url`)),
            ),
          ],
        ]),
      );
      rec.created = snapshotDir(join(root, impl.name), norm);
      return rec;
    });
  });
});

describe(`loadEntriesFromFile / findMostRecentSession edge paths (${LABELS.join(" vs ")})`, () => {
  it("missing file, a directory, missing dir", () => {
    diffEach("edge paths", (impl, norm) => {
      const base = join(root, impl.name, "edge");
      mkdirSync(join(base, "adir.jsonl"), { recursive: true });
      return {
        missing: normCapture(
          norm,
          capture(() => impl.mod.loadEntriesFromFile(join(base, "missing.jsonl"))),
        ),
        directory: normCapture(
          norm,
          capture(() => impl.mod.loadEntriesFromFile(join(base, "adir.jsonl"))),
        ),
        recentMissingDir: normCapture(
          norm,
          capture(() => impl.mod.findMostRecentSession(join(base, "nope"))),
        ),
        recentOnlyDir: normCapture(
          norm,
          capture(() => impl.mod.findMostRecentSession(base)),
        ),
        fileUrl: normCapture(
          norm,
          capture(() => impl.mod.loadEntriesFromFile(`file://${join(base, "missing.jsonl")}`)),
        ),
      };
    });
  });
});

describe(`context building on odd inputs (${LABELS.join(" vs ")})`, () => {
  const TS = "2023-06-01T00:00:00.000Z";
  const user = (id, parentId, extra = {}) => ({
    type: "message",
    id,
    parentId,
    timestamp: TS,
    message: { role: "user", content: `u ${String(id)}`, timestamp: 1 },
    ...extra,
  });
  const assistant = (id, parentId) => ({
    type: "message",
    id,
    parentId,
    timestamp: TS,
    message: { role: "assistant", content: [], provider: "p", model: `m ${String(id)}`, timestamp: 2 },
  });
  const compaction = (id, parentId, firstKeptEntryId) => ({
    type: "compaction",
    id,
    parentId,
    timestamp: TS,
    summary: "s",
    firstKeptEntryId,
    tokensBefore: 1,
  });
  const edit = (id, parentId, targetId) => ({
    type: "context_edit",
    id,
    parentId,
    timestamp: TS,
    targetId,
    replacement: { content: "edited" },
  });
  // Each case builds fresh objects: [entries, extra leaf ids, byId maps (functions of the entries)].
  const cases = {
    primitives: () => [[user("a", null), 5, "str", true, user("b", "a")]],
    primitiveLast: () => [[user("a", null), "last"]],
    nullEntry: () => [
      [user("a", null), null, user("b", "a")],
      ["b"],
      [
        (es) =>
          new Map([
            ["a", es[0]],
            ["b", es[2]],
          ]),
      ],
    ],
    undefinedEntry: () => [[undefined, user("a", null)]],
    // NaN is falsy as a parentId: a caller's index reaches an entry whose id is NaN. A Map finds NaN, `===` does not.
    nanIds: () => [
      [user(Number.NaN, null), compaction("c", "p", Number.NaN), edit("e", "c", Number.NaN)],
      [Number.NaN, "e"],
      [
        (es) =>
          new Map([
            ["p", es[0]],
            ["c", es[1]],
            ["e", es[2]],
          ]),
      ],
    ],
    nanEdit: () => [
      [user(Number.NaN, null), edit("e", "p", Number.NaN)],
      ["e"],
      [
        (es) =>
          new Map([
            ["p", es[0]],
            ["e", es[1]],
          ]),
      ],
    ],
    // The last entry is reached without a lookup: a compaction whose id is NaN is not found by `findIndex`.
    nanCompactionLast: () => [[user("a", null), compaction(Number.NaN, "a", "a")]],
    nanCompactionKeeps: () => [[user("a", null), compaction(Number.NaN, "a", "a"), user("c", Number.NaN)]],
    objectIds: () => {
      const k = { key: 1 };
      const other = { key: 1 };
      return [[user(k, null), assistant("b", k), edit("e", "b", k), compaction("c", "e", k), user(other, "c")], [k]];
    },
    duplicateIds: () => [
      [user("a", null), user("b", "a"), user("a", null), assistant("c", "a"), edit("x", "c", "a")],
      ["a"],
    ],
    // Only a caller's index reaches an earlier entry with the compaction's id (entries' own index maps the id to the
    // compaction itself).
    compactionIdIsEarlierId: () => [
      [user("a", null), user("b", "a"), compaction("a", "b", "b"), user("d", "c")],
      ["d"],
      [
        (es) =>
          new Map([
            ["a", es[0]],
            ["b", es[1]],
            ["c", es[2]],
            ["d", es[3]],
          ]),
      ],
    ],
    orphans: () => [
      [user("a", "missing"), assistant("b", "a"), user("c", "gone")],
      ["b", "c"],
    ],
    undefinedIds: () => [[user(undefined, null), assistant("b", undefined), compaction("c", "b", undefined)]],
    falsyIds: () => [
      [user("", null), user(0, ""), edit("e", 0, ""), compaction("c", "e", 0), user(false, "c")],
      ["", 0, false],
    ],
    oddTypes: () => [
      [
        { type: 5, id: "a", parentId: null, timestamp: TS },
        { type: ["message"], id: "b", parentId: "a", timestamp: TS, message: null },
        { type: "Message", id: "c", parentId: "b", timestamp: TS },
        { type: "thinking_level_change", id: "d", parentId: "c", timestamp: TS, thinkingLevel: 7 },
        { type: "model_change", id: "e", parentId: "d", timestamp: TS },
        user("f", "e", { message: { role: 5, content: "x" } }),
        user("g", "f", { message: "not an object" }),
      ],
    ],
    missingMessageOnPath: () => [[user("a", null), { type: "message", id: "b", parentId: "a", timestamp: TS }], ["a"]],
    missingMessageKept: () => [
      [
        user("a", null),
        { type: "message", id: "b", parentId: "a", timestamp: TS, message: null },
        compaction("c", "b", "b"),
        user("d", "c"),
      ],
    ],
    missingMessageBeforeKept: () => [
      [
        { type: "message", id: "a", parentId: null, timestamp: TS },
        user("b", "a"),
        compaction("c", "b", "b"),
        user("d", "c"),
      ],
    ],
    systemInKept: () => [
      [
        user("a", null),
        user("s", "a", { message: { role: "system", content: "sys" } }),
        compaction("c1", "s", "a"),
        user("b", "c1"),
        compaction("c2", "b", "a"),
        user("d", "c2"),
      ],
    ],
    callerIndexes: () => {
      const foreign = assistant("f", "a");
      return [
        [user("a", null), user("b", "a"), edit("e", "b", "a")],
        ["f", "b", "zero", "nul", "str", "e"],
        [
          (es) =>
            new Map([
              ["a", es[0]],
              ["b", es[1]],
              ["f", foreign],
              ["e", es[2]],
            ]),
          (es) =>
            new Map([
              ["b", es[1]],
              ["zero", 0],
              ["nul", null],
              ["str", "a string"],
              ["e", es[2]],
              ["a", 0],
            ]),
          (es) => ({ get: (id) => (id === "a" ? es[0] : id === "b" ? es[1] : undefined) }),
          () => ({}),
          () => new Map(),
        ],
      ];
    },
    empty: () => [[]],
  };
  for (const [name, make] of Object.entries(cases)) {
    it(name, () => {
      diffEach(name, (impl, norm) => {
        const m = impl.mod;
        const [entries, leafIds = [], byIds = []] = make();
        const reg = buildRegistry(entries, null);
        const rec = {};
        const leaves = [["omitted"], ["null", null], ["undefined", undefined], ["zero", 0], ["missing", "zz"]];
        for (const id of leafIds) leaves.push([`id ${String(id)}`, id]);
        for (const [leafName, leafId] of leaves) {
          const argLists = [["no byId", leafName === "omitted" ? [entries] : [entries, leafId]]];
          if (leafName !== "omitted") {
            byIds.forEach((byId, i) => {
              argLists.push([`byId ${i}`, [entries, leafId, byId(entries)]]);
            });
          }
          for (const [argName, args] of argLists) {
            for (const fn of ["buildContextEntries", "buildSessionProjection", "buildSessionContext"]) {
              rec[`${fn}(${leafName}, ${argName})`] = callRec(norm, reg, () => m[fn](...args));
            }
          }
        }
        return rec;
      });
    });
  }
});
