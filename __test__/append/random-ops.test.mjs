// Differential test: seeded random sequences of SessionManager operations, run side by side on the reference and
// on ours, each in its own temp dir. After every operation we compare the return value (or thrown error), the
// manager's observable state (every getter, identity relations) and the bytes of every file both sides wrote.
//
// Env: DIFF_SEEDS (default 400), DIFF_OPS (ops per seed, default 80), DIFF_SEED_BASE (default 1),
//      DIFF_SEED=<n> to run a single seed, DIFF_SELF=1 for reference-vs-reference.
// A failure names its seed; rerun it alone with DIFF_SEED=<seed>.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { canonicalTies, firstRecordDiff } from "../helpers/compare.mjs";
import { buildRegistry, identityTokens } from "../helpers/identity.mjs";
import { IMPLS } from "../helpers/impls.mjs";
import { captureAsync, formatDiff, Normalizer, normCapture, show } from "../../support/normalize.mjs";
import { CWDS, OPS } from "../helpers/ops.mjs";
import { Rng } from "../helpers/prng.mjs";
import { snapshotDir, snapshotManager } from "../helpers/snapshot.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const SEEDS = Number(process.env.DIFF_SEEDS ?? 400);
const OPS_PER_SEED = Number(process.env.DIFF_OPS ?? 80);
const SEED_BASE = Number(process.env.DIFF_SEED_BASE ?? 1);
const seeds = process.env.DIFF_SEED
  ? [Number(process.env.DIFF_SEED)]
  : Array.from({ length: SEEDS }, (_, i) => SEED_BASE + i);
const LABELS = IMPLS.map((i) => i.name);
const failures = [];
const stats = new Map(); // DIFF_STATS=1: outcome counts per op on the reference side

const root = makeTempRoot("ops");

function makeCtx(impl, seed) {
  const base = join(root, `s${seed}`, impl.name);
  const ctx = {
    name: impl.name,
    mod: impl.mod,
    SM: impl.mod.SessionManager,
    base,
    agentDir: join(base, "agent"),
    sessionsDir: join(base, "sessions"),
    otherDir: join(base, "other"),
    norm: new Normalizer().addRoot(base),
    sm: undefined,
    files: [],
    fileCache: new Map(),
    prevEntries: undefined,
    sparse: false,
    knownIds: [],
  };
  mkdirSync(ctx.agentDir, { recursive: true });
  return ctx;
}

function trackFiles(ctx, value) {
  const add = (f) => {
    if (typeof f === "string" && f.endsWith(".jsonl") && !ctx.files.includes(f)) {
      ctx.files.push(f);
      ctx.norm.str(f); // map ids in file names in creation order, the same on both sides
    }
  };
  add(value);
  try {
    add(ctx.sm?.getSessionFile());
  } catch {
    // reported by the snapshot
  }
}

/** Normalised view of a list/listAll result with its progress calls. */
function shapeListing(norm, v) {
  const calls = v.calls;
  const last = calls[calls.length - 1];
  const noDir = v.listing === "listAll";
  return {
    result: canonicalTies(norm.value(v.result)),
    calls: calls.map((c, i) => [
      c.loaded,
      c.total,
      // which calls carry a partial list is only deterministic for list()/listAll(dir) (and for the last call)
      noDir && i < calls.length - 1 ? "?" : c.partial === undefined ? "none" : "some",
    ]),
    lastPartial: last?.partial ? canonicalTies(norm.value(last.partial)) : null,
    callsAtResolve: v.atResolve,
    callsAfterDelay: calls.length,
  };
}

async function step(ctx, op, spec, { full, perId }) {
  process.env.PI_CODING_AGENT_DIR = ctx.agentDir;
  ctx.norm.beginEpoch();
  const r = await captureAsync(() => op.run(ctx, spec));
  ctx.norm.endEpoch();
  if (process.env.DIFF_STATS && ctx === step.first) {
    const k = `${op.name}: ${
      "error" in r
        ? `threw ${String(r.error?.message)
            .replace(/[0-9a-f]{8}/g, "<id>")
            .slice(0, 70)}`
        : "ok"
    }`;
    stats.set(k, (stats.get(k) ?? 0) + 1);
  }
  const rec = {};
  if ("error" in r) {
    rec.result = normCapture(ctx.norm, r);
  } else {
    let value = r.value;
    let ident = null;
    if (value instanceof ctx.SM) {
      ctx.sm = value;
      ctx.prevEntries = undefined;
      ctx.knownIds = [];
      value = "<SessionManager>";
    } else if (/^append|^branchWithSummary/.test(op.name)) {
      const id = typeof value === "string" ? value : value?.id;
      if (typeof id === "string") ctx.knownIds.push(id);
    } else if (/^newSession|^setSessionFile/.test(op.name)) {
      ctx.knownIds = [];
    }
    trackFiles(ctx, value);
    if (value && typeof value === "object" && value.listing) {
      rec.result = { value: shapeListing(ctx.norm, value), async: r.wasPromise };
    } else {
      rec.result = normCapture(ctx.norm, { ...r, value });
      if (value && typeof value === "object") {
        ident = identityTokens(value, buildRegistry(ctx.sm.getEntries(), ctx.sm.getHeader()));
      }
    }
    rec.resultIdentity = ident;
  }
  trackFiles(ctx, undefined);
  if (full) {
    const snap = snapshotManager(ctx.sm, { prevEntries: ctx.prevEntries, perId });
    ctx.prevEntries = snap.entries;
    rec.state = ctx.norm.value(snap.values);
    rec.identity = snap.ident;
  }
  rec.files = snapshotDir(ctx.base, ctx.norm, full === "final" ? undefined : ctx.fileCache);
  return rec;
}

function compareRecs(recs) {
  const [a, b] = recs;
  for (const part of ["result", "resultIdentity", "state", "identity", "files"]) {
    if (!(part in a) && !(part in b)) continue;
    const d =
      a[part] && b[part] && typeof a[part] === "object" && !Array.isArray(a[part]) && part !== "result"
        ? firstRecordDiff(a[part], b[part], `${part}.`)
        : firstRecordDiff({ [part]: a[part] }, { [part]: b[part] });
    if (d) return d;
  }
  return null;
}

async function runSeed(seed) {
  const rng = new Rng(seed);
  const st = { counter: 0 };
  const ctxs = IMPLS.map((impl) => makeCtx(impl, seed));
  step.first = ctxs[0];
  const log = [];
  const sparse = seed % 4 === 3; // some seeds only look at the state now and then (lazy paths in ours)
  for (const ctx of ctxs) ctx.sparse = sparse;
  const fail = (i, opName, spec, d) => {
    const where = i < 0 ? "initial" : `op #${i} ${opName}`;
    failures.push({ seed, op: opName, key: d.key.replace(/\[\d+\]/g, "[]") });
    throw new Error(
      `seed ${seed}, ${where}\n  spec: ${show(spec, 600)}\n  diff in ${d.key} ${formatDiff(d.diff, LABELS)}\n` +
        `  previous ops: ${log.slice(-12).join(", ")}\n  rerun: ${OPS_PER_SEED !== 80 ? `DIFF_OPS=${OPS_PER_SEED} ` : ""}DIFF_SEED=${seed} DIFF_TRACE=1 npx vitest run __test__/append/random-ops.test.mjs`,
    );
  };

  // Start: a persisted session in `sessions`, one in the default dir, or an in-memory one.
  const start = {
    name: "start",
    run: (ctx, s) =>
      s.kind === "create"
        ? ctx.SM.create(s.cwd, ctx.sessionsDir, s.options)
        : s.kind === "createDefault"
          ? ctx.SM.create(s.cwd)
          : ctx.SM.inMemory(s.cwd, s.options),
  };
  const startSpec = {
    kind: rng.weighted([
      [6, "create"],
      [1, "createDefault"],
      [2, "inMemory"],
    ]),
    cwd: rng.pick(CWDS),
    options: rng.bool(0.2) ? { id: `start-${seed}` } : undefined,
  };
  {
    const recs = [];
    for (const ctx of ctxs) recs.push(await step(ctx, start, startSpec, { full: true, perId: 3 }));
    const d = compareRecs(recs);
    if (d) fail(-1, "start", startSpec, d);
  }

  for (let i = 0; i < OPS_PER_SEED; i++) {
    const op = rng.weighted(OPS.map((o) => [o.weight, o]));
    const spec = op.gen(rng, st);
    log.push(op.name);
    const full = !sparse || i % 8 === 7;
    const recs = [];
    for (const ctx of ctxs) recs.push(await step(ctx, op, spec, { full, perId: 4 }));
    if (process.env.DIFF_TRACE) {
      console.log(
        `#${i} ${op.name} ${show(spec, 300)}\n   -> ${LABELS.map((l, k) => `${l}: ${show(recs[k].result, 200)}`).join("\n      ")}`,
      );
    }
    const d = compareRecs(recs);
    if (d) fail(i, op.name, spec, d);
  }

  // Final: full snapshot with every per-id getter, full re-read of all files, then reopen from disk and compare.
  const final = { name: "final", run: () => undefined };
  {
    const recs = [];
    for (const ctx of ctxs) recs.push(await step(ctx, final, {}, { full: "final", perId: "all" }));
    const d = compareRecs(recs);
    if (d) fail(OPS_PER_SEED, "final", {}, d);
  }
  const reopen = {
    name: "reopen",
    run: (ctx) => {
      const file = ctx.sm.getSessionFile();
      return ctx.sm.isPersisted() && file ? ctx.SM.open(file) : "in-memory";
    },
  };
  {
    const recs = [];
    for (const ctx of ctxs) recs.push(await step(ctx, reopen, {}, { full: "final", perId: "all" }));
    const d = compareRecs(recs);
    if (d) fail(OPS_PER_SEED + 1, "reopen", {}, d);
  }
}

describe(`random ops (${LABELS.join(" vs ")})`, () => {
  afterAll(() => {
    if (process.env.DIFF_STATS) {
      console.log(
        [...stats]
          .sort()
          .map(([k, n]) => `${String(n).padStart(6)}  ${k}`)
          .join("\n"),
      );
    }
    if (!failures.length) return;
    const groups = new Map();
    for (const f of failures) {
      const k = `${f.op} :: ${f.key}`;
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(f.seed);
    }
    const lines = [...groups]
      .sort((x, y) => y[1].length - x[1].length)
      .map(([k, s]) => `  ${String(s.length).padStart(4)}× ${k}   seeds ${s.slice(0, 8).join(",")}`);
    console.log(
      `[random-ops] ${failures.length}/${seeds.length} seeds failed; first difference per seed, grouped:\n${lines.join("\n")}`,
    );
  });

  for (const seed of seeds) {
    it(`seed ${seed}`, () => runSeed(seed));
  }
});
