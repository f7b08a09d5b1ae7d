// The random-operation table for random-ops.test.mjs.
//
// Each op has gen(rng, st) -> spec (plain data, drawn from the shared seeded Rng before either implementation runs)
// and run(ctx, spec) -> result (run once per implementation; ctx holds that implementation's module, current
// SessionManager, temp dirs and normaliser). Payloads are structuredClone()d per implementation, so neither side
// sees objects the other one stored.
//
// appendCompaction's 7th argument (retainedTail) exists only in ours and is never passed here.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ref } from "./impls.mjs";
import * as P from "./payloads.mjs";

export const CWDS = [
  "/tmp/pi-diff-cwd/project-a",
  "/tmp/pi-diff-cwd/project b",
  "/tmp/pi-diff-cwd/prøject-ü😀",
  "relative/proj",
  // Windows: a drive path, a UNC share and a \\?\ long path, as the reference derives folders from them.
  ...(process.platform === "win32"
    ? ["C:\\Users\\pi user\\proj", "\\\\server\\share\\proj", "\\\\?\\C:\\long\\proj"]
    : []),
];
export const UNKNOWN_IDS = ["zzzzzzzz", "unknown-id", "", "root", "ZZZZ-0000"];

const clone = (v) => (v === undefined ? undefined : structuredClone(v));

/** Call fn with the first `arity` of args (to tell "missing" from "undefined" arguments apart). */
const callArity = (obj, name, args, arity) => obj[name](...args.slice(0, arity));

// ------------------------------------------------------------------------------------------------ spec helpers

function idSpec(rng, { unknown = 0.15, leaf = 0.1 } = {}) {
  const r = rng.float();
  if (r < 0.03) return { kind: "unknown", value: rng.pick([null, undefined, 0, 5]) };
  if (r < unknown) return { kind: "unknown", value: rng.pick(UNKNOWN_IDS) };
  if (r < unknown + leaf) return { kind: "leaf" };
  return { kind: "entry", frac: rng.float() };
}

export function resolveId(ctx, spec) {
  if (spec.kind === "unknown") return spec.value;
  if (spec.kind === "leaf") return ctx.sm.getLeafId();
  // "sparse" seeds pick among ids the appends returned, so they never materialise every entry (lazy paths)
  const ids = ctx.sparse && ctx.knownIds.length ? ctx.knownIds : ctx.sm.getEntries().map((e) => e.id);
  return ids.length ? ids[Math.floor(spec.frac * ids.length)] : "no-entries";
}

function fileSpec(rng, st) {
  return rng.weighted([
    [8, () => ({ kind: "known", frac: rng.float() })],
    [3, () => ({ kind: "current" })],
    [1, () => ({ kind: "missing", n: st.counter++ })],
    [1, () => ({ kind: "empty", n: st.counter++ })],
    [1, () => ({ kind: "garbage", n: st.counter++ })],
  ])();
}

export function resolveFile(ctx, spec) {
  switch (spec.kind) {
    case "known":
      return ctx.files.length
        ? ctx.files[Math.floor(spec.frac * ctx.files.length)]
        : join(ctx.sessionsDir, "none.jsonl");
    case "current":
      return ctx.sm.getSessionFile() ?? join(ctx.sessionsDir, "no-current.jsonl");
    case "missing":
      return join(ctx.sessionsDir, `missing-${spec.n}.jsonl`);
    case "empty": {
      mkdirSync(ctx.sessionsDir, { recursive: true });
      const path = join(ctx.sessionsDir, `empty-${spec.n}.jsonl`);
      closeSync(openSync(path, "w"));
      return path;
    }
    case "garbage": {
      mkdirSync(ctx.sessionsDir, { recursive: true });
      const path = join(ctx.sessionsDir, `garbage-${spec.n}.jsonl`);
      writeFileSync(path, 'this is not a session\n{"type":"message"}\n');
      return path;
    }
    default:
      throw new Error(`bad file spec ${spec.kind}`);
  }
}

function dirSpec(rng) {
  return rng.weighted([
    [5, () => "sessions"],
    [2, () => "other"],
    [1, () => undefined],
  ])();
}

const resolveDir = (ctx, d) => (d === "sessions" ? ctx.sessionsDir : d === "other" ? ctx.otherDir : undefined);

function optionsSpec(rng, st) {
  return rng.weighted([
    [6, () => undefined],
    [1, () => ({})],
    [1, () => ({ id: `sess-${st.counter++}.custom_id` })],
    [1, () => ({ id: rng.pick(["-bad", "bad-", "with space", "", "a/b", "ok..ok", "ü"]) })],
    [0.2, () => ({ id: rng.pick([5, 12.5, true]) })], // the reference's regex coerces: a number id is accepted
    [1, () => ({ parentSession: "/tmp/pi-diff-cwd/parent.jsonl" })],
    [1, () => ({ id: `x${st.counter++}`, parentSession: undefined })],
  ])();
}

/**
 * Give every .jsonl file in `dir` a deterministic mtime (creation order of known files, then special files by
 * name), so discovery that sorts by mtime sees the same order on both sides.
 */
export function pinMtimes(ctx, dir) {
  if (!dir || !existsSync(dir)) return;
  let names;
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
  } catch {
    return;
  }
  const base = 1_600_000_000;
  const special = names.filter((n) => !ctx.files.includes(join(dir, n))).sort();
  for (const n of names) {
    const path = join(dir, n);
    const known = ctx.files.indexOf(path);
    const rank = known >= 0 ? known : 10_000 + special.indexOf(n);
    try {
      utimesSync(path, base + rank, base + rank);
    } catch {
      // ignore
    }
  }
}

/** Progress recorder: (loaded, total, partial?) calls, plus how many arrived after the promise resolved. */
export function progressRecorder() {
  const calls = [];
  const fn = (loaded, total, partial) => {
    calls.push({ loaded, total, partial: partial === undefined ? undefined : [...partial] });
  };
  return { calls, fn };
}

// ------------------------------------------------------------------------------------------------ the table

export const OPS = [
  {
    name: "appendMessage",
    weight: 25,
    // rarely a message that is not an object with a role: the reference stores whatever it is given
    gen: (rng) => ({
      message: rng.bool(0.02)
        ? rng.pick(["just a string", 42, [], {}, { role: 5, content: "x" }, { content: "no role" }])
        : P.anyMessage(rng),
    }),
    run: (ctx, s) => ctx.sm.appendMessage(clone(s.message)),
  },
  {
    name: "appendThinkingLevelChange",
    weight: 3,
    gen: (rng) => ({
      level: rng.pick(["off", "minimal", "low", "medium", "high", "xhigh", P.advString(rng), undefined, null, 3]),
    }),
    run: (ctx, s) => ctx.sm.appendThinkingLevelChange(s.level),
  },
  {
    name: "appendModelChange",
    weight: 3,
    gen: (rng) => ({
      provider: rng.pick(["anthropic", "openai", P.advString(rng), undefined]),
      modelId: rng.pick(["m1", "gpt-5", P.advString(rng), null]),
    }),
    run: (ctx, s) => ctx.sm.appendModelChange(s.provider, s.modelId),
  },
  {
    name: "appendUsage",
    weight: 3,
    gen: (rng) => ({
      args: [
        "summarize",
        rng.pick(["anthropic", "openai"]),
        rng.pick(["m1", "😀"]),
        P.usage(rng),
        rng.pick(["a note", "", undefined, "  ", P.advString(rng)]),
      ],
      arity: rng.pick([4, 5, 5]),
    }),
    run: (ctx, s) => callArity(ctx.sm, "appendUsage", clone(s.args), s.arity),
  },
  {
    name: "appendCompaction",
    weight: 5,
    gen: (rng) => ({
      summary: P.advString(rng),
      first: rng.weighted([
        [2, () => ({ kind: "null" })],
        [1, () => ({ kind: "undefined" })],
        [5, () => idSpec(rng, { unknown: 0.1, leaf: 0.1 })],
      ])(),
      tokensBefore: P.advNumber(rng),
      details: rng.bool(0.5) ? P.advValue(rng) : undefined,
      fromHook: rng.pick([true, false, undefined]),
      usage: rng.bool(0.3) ? P.usage(rng) : undefined,
      arity: rng.pick([3, 4, 5, 6, 6]),
    }),
    run: (ctx, s) => {
      const first = s.first.kind === "null" ? null : s.first.kind === "undefined" ? undefined : resolveId(ctx, s.first);
      const args = [s.summary, first, s.tokensBefore, clone(s.details), s.fromHook, clone(s.usage)];
      return callArity(ctx.sm, "appendCompaction", args, s.arity);
    },
  },
  {
    name: "appendCustomEntry",
    weight: 3,
    gen: (rng) => ({
      type: rng.pick(["ext-state", "😀", "", 5, undefined]),
      data: P.advValue(rng),
      arity: rng.pick([1, 2, 2]),
    }),
    run: (ctx, s) => callArity(ctx.sm, "appendCustomEntry", [s.type, clone(s.data)], s.arity),
  },
  {
    name: "appendSessionInfo",
    weight: 3,
    gen: (rng) => ({ name: P.sessionName(rng) }),
    run: (ctx, s) => ctx.sm.appendSessionInfo(s.name),
  },
  {
    name: "appendCustomMessageEntry",
    weight: 4,
    gen: (rng) => ({
      type: rng.pick(["ext-msg", "😀"]),
      content: P.userContent(rng),
      display: rng.pick([true, false]),
      details: P.advValue(rng),
      arity: rng.pick([3, 4]),
    }),
    run: (ctx, s) =>
      callArity(ctx.sm, "appendCustomMessageEntry", [s.type, clone(s.content), s.display, clone(s.details)], s.arity),
  },
  {
    name: "appendContextEdit",
    weight: 6,
    gen: (rng) => ({ target: idSpec(rng, { unknown: 0.15, leaf: 0.05 }), replacement: P.replacement(rng) }),
    run: (ctx, s) => ctx.sm.appendContextEdit(resolveId(ctx, s.target), clone(s.replacement)),
  },
  {
    name: "appendLabelChange",
    weight: 5,
    gen: (rng) => ({ target: idSpec(rng), label: P.label(rng), arity: rng.pick([1, 2, 2, 2]) }),
    run: (ctx, s) => callArity(ctx.sm, "appendLabelChange", [resolveId(ctx, s.target), s.label], s.arity),
  },
  {
    name: "branch",
    weight: 5,
    gen: (rng) => ({ target: idSpec(rng, { unknown: 0.15, leaf: 0.05 }) }),
    run: (ctx, s) => ctx.sm.branch(resolveId(ctx, s.target)),
  },
  {
    name: "resetLeaf",
    weight: 1,
    gen: () => ({}),
    run: (ctx) => ctx.sm.resetLeaf(),
  },
  {
    name: "branchWithSummary",
    weight: 4,
    gen: (rng) => ({
      from: rng.bool(0.2) ? { kind: "null" } : idSpec(rng),
      summary: rng.pick(["", P.advString(rng), "summary"]),
      details: P.advValue(rng),
      fromHook: rng.pick([true, false, undefined]),
      usage: rng.bool(0.3) ? P.usage(rng) : undefined,
      arity: rng.pick([2, 3, 4, 5]),
    }),
    run: (ctx, s) => {
      const from = s.from.kind === "null" ? null : resolveId(ctx, s.from);
      return callArity(
        ctx.sm,
        "branchWithSummary",
        [from, s.summary, clone(s.details), s.fromHook, clone(s.usage)],
        s.arity,
      );
    },
  },
  {
    name: "getterWithArgs",
    weight: 4,
    gen: (rng) => ({
      which: rng.pick(["getEntry", "getChildren", "getLabel", "getBranch", "getBranch()"]),
      target: rng.bool(0.15)
        ? { kind: "unknown", value: rng.pick([null, undefined, ""]) }
        : idSpec(rng, { unknown: 0.3 }),
    }),
    run: (ctx, s) => (s.which === "getBranch()" ? ctx.sm.getBranch() : ctx.sm[s.which](resolveId(ctx, s.target))),
  },
  {
    name: "createBranchedSession",
    weight: 3,
    gen: (rng) => ({ target: idSpec(rng, { unknown: 0.1, leaf: 0.3 }) }),
    run: (ctx, s) => ctx.sm.createBranchedSession(resolveId(ctx, s.target)),
  },
  {
    name: "newSession",
    weight: 1,
    gen: (rng, st) => ({ options: optionsSpec(rng, st), arity: rng.pick([0, 1]) }),
    run: (ctx, s) => callArity(ctx.sm, "newSession", [clone(s.options)], s.options === undefined ? s.arity : 1),
  },
  {
    name: "setSessionFile",
    weight: 2,
    gen: (rng, st) => ({ file: fileSpec(rng, st) }),
    run: (ctx, s) => ctx.sm.setSessionFile(resolveFile(ctx, s.file)),
  },
  {
    name: "open",
    weight: 4,
    gen: (rng, st) => ({
      file: fileSpec(rng, st),
      dir: rng.weighted([
        [4, () => undefined],
        [1, () => "other"],
      ])(),
      cwdOverride: rng.weighted([
        [5, () => undefined],
        [1, () => rng.pick(CWDS)],
      ])(),
      arity: rng.pick([1, 3]),
    }),
    run: (ctx, s) =>
      callArity(
        ctx.SM,
        "open",
        [resolveFile(ctx, s.file), resolveDir(ctx, s.dir), s.cwdOverride],
        s.dir || s.cwdOverride ? 3 : s.arity,
      ),
  },
  {
    name: "continueRecent",
    weight: 1,
    gen: (rng) => ({ cwd: rng.pick(CWDS), dir: dirSpec(rng) }),
    run: (ctx, s) => {
      const dir = resolveDir(ctx, s.dir);
      // the reference's getDefaultSessionDir on both sides: creates the same dir, pins the same mtimes
      pinMtimes(ctx, dir ?? ref.getDefaultSessionDir(s.cwd));
      return dir === undefined ? ctx.SM.continueRecent(s.cwd) : ctx.SM.continueRecent(s.cwd, dir);
    },
  },
  {
    name: "forkFrom",
    weight: 1,
    gen: (rng, st) => ({
      file: fileSpec(rng, st),
      cwd: rng.pick(CWDS),
      dir: dirSpec(rng),
      options: optionsSpec(rng, st),
    }),
    run: (ctx, s) => ctx.SM.forkFrom(resolveFile(ctx, s.file), s.cwd, resolveDir(ctx, s.dir), clone(s.options)),
  },
  {
    name: "create",
    weight: 1,
    gen: (rng, st) => ({ cwd: rng.pick(CWDS), dir: dirSpec(rng), options: optionsSpec(rng, st) }),
    run: (ctx, s) => ctx.SM.create(s.cwd, resolveDir(ctx, s.dir), clone(s.options)),
  },
  {
    name: "inMemory",
    weight: 1,
    gen: (rng, st) => ({
      cwd: rng.pick([...CWDS, undefined]),
      options: optionsSpec(rng, st),
      entries: rng.pick(["none", "withHeader", "withoutHeader"]),
    }),
    run: (ctx, s) => {
      let entries;
      if (s.entries !== "none") {
        // the same logical entries on both sides, each side's own copy
        entries = structuredClone(ctx.sm.getEntries());
        if (s.entries === "withHeader") entries.unshift(structuredClone(ctx.sm.getHeader()));
      }
      return ctx.SM.inMemory(s.cwd, clone(s.options), entries);
    },
  },
  {
    name: "discovery",
    weight: 2,
    gen: (rng) => ({
      which: rng.pick([
        "findById",
        "findById-unknown",
        "findMostRecentSession",
        "list",
        "listAll-dir",
        "listAll",
        "getDefaultSessionDir",
      ]),
      cwd: rng.pick(CWDS),
      dir: dirSpec(rng),
      withCwd: rng.bool(),
    }),
    run: async (ctx, s) => {
      const dir = resolveDir(ctx, s.dir);
      pinMtimes(ctx, ctx.sessionsDir);
      pinMtimes(ctx, ctx.otherDir);
      if (dir === undefined) pinMtimes(ctx, ref.getDefaultSessionDir(s.cwd));
      if (s.which === "listAll") {
        const sessionsRoot = join(ctx.agentDir, "sessions");
        if (existsSync(sessionsRoot)) for (const d of readdirSync(sessionsRoot)) pinMtimes(ctx, join(sessionsRoot, d));
      }
      switch (s.which) {
        case "findById":
          return ctx.SM.findById(s.cwd, ctx.sm.getSessionId(), dir);
        case "findById-unknown":
          return ctx.SM.findById(s.cwd, "01a22d64-0000-7000-8000-000000000000", dir);
        case "findMostRecentSession":
          return s.withCwd
            ? ctx.mod.findMostRecentSession(dir ?? ctx.sessionsDir, s.cwd)
            : ctx.mod.findMostRecentSession(dir ?? ctx.sessionsDir);
        case "getDefaultSessionDir":
          return ctx.mod.getDefaultSessionDir(s.cwd);
        default: {
          const p = progressRecorder();
          let result;
          if (s.which === "list") result = await ctx.SM.list(s.cwd, dir, p.fn);
          else if (s.which === "listAll-dir") result = await ctx.SM.listAll(dir ?? ctx.sessionsDir, p.fn);
          else result = await ctx.SM.listAll(p.fn);
          const atResolve = p.calls.length;
          await new Promise((r) => setTimeout(r, 5));
          return { listing: s.which, result, calls: p.calls, atResolve };
        }
      }
    },
  },
  {
    // another process (or the user) deletes the current session file; the next append recreates it
    name: "externalDelete",
    weight: 0.5,
    gen: () => ({}),
    run: (ctx) => {
      const f = ctx.sm.getSessionFile();
      if (f && existsSync(f)) rmSync(f);
      return f ? "deleted" : "none";
    },
  },
  {
    name: "loadEntriesFromFile",
    weight: 1,
    gen: (rng, st) => ({ file: fileSpec(rng, st) }),
    run: (ctx, s) => ctx.mod.loadEntriesFromFile(resolveFile(ctx, s.file)),
  },
];
