#!/usr/bin/env node
// Benchmark: pi-session-native against the pinned reference SessionManager.
//
//   npm run bench                  full suite (~5-10 min on 2 cores)
//   npm run bench -- --quick       subset with fewer rounds (~1-2 min)
//   BENCH_SELF=1 npm run bench     reference against itself (develop the suite; ratios ~1×)
//
// Options: --quick, --only key,key  --skip key,key  --no-rss  --no-fresh  --seed N  --data DIR
//          --out results.md  --chart chart.svg  --list (print operation keys)
//
// For each operation: both implementations run it once and must agree (entry counts,
// leaf ids, hashes of returned data and written files); a disagreement skips that
// operation with a loud message. Then warm-up, then interleaved rounds (A B, B A, …)
// with a forced GC before every sample. Reports median, min–max and the ratio
// reference/ours (>1 means ours is faster). Peak RSS is measured per operation family
// in a fresh child process per implementation. Data is generated once per seed under
// .bench-data/ (gitignored) and PI_CODING_AGENT_DIR points at the generated agent dir.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import vm from "node:vm";
import { compareSigs } from "./agree.mjs";
import { ensureBenchData } from "../support/gen.mjs";
import { measureFresh } from "./fresh.mjs";
import { describeOurs, IMPL_NAMES, loadImpl, oursBuildId, SELF, snapshotOurs } from "./impls.mjs";
import { dataContext, defineOps } from "./ops.mjs";
import { fmt, machineInfo, writeReport } from "./report.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");

function parseArgs(argv) {
  const a = {
    quick: false,
    rss: true,
    fresh: true,
    only: null,
    skip: [],
    seed: 42,
    data: join(ROOT, ".bench-data"),
    out: null,
    chart: null,
    list: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => argv[++i];
    if (k === "--quick") a.quick = true;
    else if (k === "--no-rss") a.rss = false;
    else if (k === "--no-fresh") a.fresh = false;
    else if (k === "--only") a.only = val().split(",");
    else if (k === "--skip") a.skip = val().split(",");
    else if (k === "--seed") a.seed = Number(val());
    else if (k === "--data") a.data = resolve(val());
    else if (k === "--out") a.out = resolve(val());
    else if (k === "--chart") a.chart = resolve(val());
    else if (k === "--list") a.list = true;
    else if (k === "--help" || k === "-h") {
      console.log(
        "usage: node bench/run.mjs [--quick] [--only k,k] [--skip k,k] [--no-rss] [--no-fresh] [--seed N] [--data DIR] [--out FILE.md] [--chart FILE.svg] [--list]",
      );
      process.exit(0);
    } else throw new Error(`unknown option ${k}`);
  }
  // Full runs of the real implementation update the committed results; quick and
  // self runs go next to the data unless told otherwise.
  const scratch = a.quick || SELF;
  const suffix = `${a.quick ? "-quick" : ""}${SELF ? "-self" : ""}`;
  a.out ??= scratch ? join(a.data, `results${suffix}.md`) : join(HERE, "results.md");
  a.chart ??= scratch ? join(a.data, `chart${suffix}.svg`) : join(HERE, "chart.svg");
  return a;
}

const args = parseArgs(process.argv.slice(2));
const MODE = args.quick
  ? { budgetMs: 2000, minRounds: 3, maxRounds: 10, warmMs: 150, minSampleMs: 20 }
  : { budgetMs: 20000, minRounds: 5, maxRounds: 40, warmMs: 600, minSampleMs: 50 };

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const stats = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length });

function loud(lines) {
  const bar = "!".repeat(78);
  console.error(`\n${bar}\n${lines.map((l) => `!! ${l}`).join("\n")}\n${bar}\n`);
}

async function callOnce(op, impl, D, st, wantSig = false) {
  const x = await op.prepare?.(impl, D, st);
  const t0 = performance.now();
  const result = await op.run(impl, D, st, x);
  const ms = performance.now() - t0;
  let sig;
  try {
    if (wantSig) sig = await op.signature(impl, D, st, x, result);
  } finally {
    await op.cleanup?.(impl, D, st, x, result);
  }
  return { ms, sig };
}

async function sample(op, impl, D, st, inner) {
  gc();
  // Then one turn of the event loop, as any host takes between requests: Node runs Node-API
  // finalizers (those of sessions let go: their snapshots and handles) from an immediate after a
  // GC, not in it, so a loop that never yields keeps every session it opened until it does
  // (docs/performance.md, "A loop that never yields").
  await new Promise(setImmediate);
  let total = 0;
  for (let i = 0; i < inner; i++) total += (await callOnce(op, impl, D, st)).ms;
  return total / inner;
}

/** Warm up for at least `warmMs` (the agreement run counts); returns the last per-call time. */
async function warm(op, impl, D, st, firstMs) {
  let spent = firstMs;
  let last = firstMs;
  let calls = 1;
  while (spent < MODE.warmMs || (!args.quick && calls < 2 && firstMs < 2000)) {
    last = (await callOnce(op, impl, D, st)).ms;
    spent += last;
    calls++;
  }
  return last;
}

async function measureSingle(op, D) {
  const impl = { name: "floor", mod: null };
  const first = (await callOnce(op, impl, D, undefined)).ms;
  const t = await warm(op, impl, D, undefined, first);
  const inner = Math.max(1, Math.ceil(MODE.minSampleMs / t));
  const rounds = Math.max(MODE.minRounds, Math.min(MODE.maxRounds, Math.floor(MODE.budgetMs / 2 / (t * inner))));
  const xs = [];
  for (let r = 0; r < rounds; r++) xs.push(await sample(op, impl, D, undefined, inner));
  return { op, status: "ok", single: true, floor: stats(xs), rounds };
}

async function measure(op, impls, D) {
  if (op.single) return measureSingle(op, D);
  const states = {};
  const first = {};
  const sigs = {};
  try {
    for (const impl of impls) {
      states[impl.name] = await op.setup?.(impl, D);
      const r = await callOnce(op, impl, D, states[impl.name], true);
      first[impl.name] = r.ms;
      sigs[impl.name] = r.sig;
    }
  } catch (error) {
    loud([`ERROR in ${op.label}: ${error?.stack?.split("\n").slice(0, 4).join(" | ") ?? error}`, "operation skipped"]);
    return { op, status: "error", error: String(error?.message ?? error) };
  }
  const diffs = compareSigs(sigs.reference, sigs.ours, IMPL_NAMES);
  if (diffs.length) {
    loud([
      `MISMATCH in ${op.label}: reference and ours disagree, operation NOT timed`,
      ...diffs.flatMap((d) => d.split("\n").map((l) => `  ${l}`)),
    ]);
    return { op, status: "mismatch", diffs };
  }
  const per = {};
  const inner = {};
  const samples = Object.fromEntries(impls.map((i) => [i.name, []]));
  let rounds;
  try {
    for (const impl of impls) {
      per[impl.name] = await warm(op, impl, D, states[impl.name], first[impl.name]);
      inner[impl.name] = Math.max(1, Math.min(10000, Math.ceil(MODE.minSampleMs / Math.max(per[impl.name], 0.001))));
    }
    const roundMs = impls.reduce((n, impl) => n + per[impl.name] * inner[impl.name], 0);
    rounds = Math.max(MODE.minRounds, Math.min(MODE.maxRounds, Math.floor(MODE.budgetMs / roundMs)));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? [...impls].reverse() : impls;
      for (const impl of order) samples[impl.name].push(await sample(op, impl, D, states[impl.name], inner[impl.name]));
    }
  } catch (error) {
    loud([
      `ERROR while timing ${op.label}: ${error?.stack?.split("\n").slice(0, 4).join(" | ") ?? error}`,
      "operation skipped",
    ]);
    return { op, status: "error", error: String(error?.message ?? error) };
  }
  const ref = stats(samples.reference);
  const ours = stats(samples.ours);
  return { op, status: "ok", reference: ref, ours, ratio: ref.median / ours.median, rounds, inner };
}

function runRssChild(op, implName, D) {
  const r = spawnSync(process.execPath, [join(HERE, "rss-child.mjs")], {
    env: { ...process.env, BENCH_RSS_ARGS: JSON.stringify({ op: op.key, impl: implName, D }) },
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.error) throw new Error(`rss child ${op.key}/${implName} could not run: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(
      `rss child ${op.key}/${implName} failed: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ")}`,
    );
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

async function main() {
  const t0 = Date.now();
  const allOps = defineOps();
  if (args.list) {
    for (const op of allOps)
      console.log(`${op.key.padEnd(18)} ${op.label}${op.quick ? "" : "  (full only)"}${op.rss ? "  [rss]" : ""}`);
    return;
  }
  const unknown = [...(args.only ?? []), ...args.skip].filter((k) => !allOps.some((o) => o.key === k));
  if (unknown.length) throw new Error(`unknown operation key(s): ${unknown.join(", ")} (see --list)`);
  let ops = allOps
    .filter((op) => (args.only ? args.only.includes(op.key) : !args.quick || op.quick))
    .filter((op) => !args.skip.includes(op.key));
  // The floors are needed for the "vs floor" column of the operations that run.
  if (args.only)
    for (const f of new Set(ops.map((o) => o.floor).filter(Boolean)))
      if (!ops.some((o) => o.key === `floor-${f}`)) ops.unshift(allOps.find((o) => o.key === `floor-${f}`));
  ops = ops.filter(Boolean);

  console.log(`pi-session-native benchmark${args.quick ? " (quick)" : ""}: reference vs ${describeOurs()}`);
  const data = ensureBenchData(args.data, { seed: args.seed, log: (s) => console.log(`  ${s}`) });
  process.env.PI_CODING_AGENT_DIR = data.agent.root;
  const tmp = mkdtempSync(join(tmpdir(), "pi-bench-"));
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  process.on("exit", cleanup);
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));
  // Measure a copy of ours, so a rebuild during the run cannot mix two builds
  // (the RSS children load the addon afresh). Children inherit BENCH_OURS_DIR.
  const oursDir = join(tmp, "ours");
  mkdirSync(oursDir);
  // Ours keeps its listing index here, not in the user's cache dir.
  process.env.PI_SESSION_NATIVE_INDEX_DIR = join(tmp, "index");
  snapshotOurs(oursDir);
  const D = dataContext(data, tmp);
  console.log(
    `  data: S ${(D.S.bytes / 2 ** 20).toFixed(1)} MB/${D.S.entries} entries, M ${(D.M.bytes / 2 ** 20).toFixed(1)} MB/${D.M.entries}, ` +
      `L ${(D.L.bytes / 2 ** 20).toFixed(1)} MB/${D.L.entries}; folder ${D.folder.count} sessions/${(D.folder.bytes / 2 ** 20).toFixed(0)} MB; ` +
      `agent dir ${D.agent.projects} projects/${D.agent.count} sessions/${(D.agent.bytes / 2 ** 20).toFixed(0)} MB`,
  );
  const machine = machineInfo();
  machine.build = oursBuildId();
  console.log(`  ours: ${machine.build}`);

  const impls = [];
  for (const name of IMPL_NAMES) {
    try {
      impls.push(await loadImpl(name));
    } catch (error) {
      loud([`cannot load ${name}: ${error.message}`]);
      process.exit(2);
    }
  }

  const results = [];
  for (const op of ops) {
    const r = await measure(op, impls, D);
    results.push(r);
    if (r.status !== "ok") continue;
    if (r.single)
      console.log(
        `  ${op.label.padEnd(52)} ${fmt(r.floor.median).padStart(9)}  [${fmt(r.floor.min)}–${fmt(r.floor.max)}]  ×${r.rounds}`,
      );
    else {
      const mark = r.ratio >= (op.target ?? 1) ? "ok" : r.ratio >= 1 ? "below target" : "SLOWER";
      console.log(
        `  ${op.label.padEnd(52)} ref ${fmt(r.reference.median).padStart(9)}  ours ${fmt(r.ours.median).padStart(9)}  ` +
          `${r.ratio.toFixed(2).padStart(6)}×  (target ${op.target}×, ${mark})  ×${r.rounds}`,
      );
    }
  }

  let fresh;
  if (args.fresh && !SELF) {
    console.log("  fresh processes (list over the 1,000-session folder):");
    fresh = measureFresh(D, { rounds: args.quick ? 3 : 7, tmp });
  }

  const rss = [];
  if (args.rss) {
    console.log("  peak RSS (fresh process per implementation and family):");
    for (const op of ops.filter((o) => (args.quick && !args.only ? o.rss === "quick" : o.rss))) {
      try {
        if (op.single) {
          const f = runRssChild(op, "floor", D);
          rss.push({ op, floor: f });
          console.log(`    ${op.label.padEnd(50)} ${(f.peakKiB / 1024).toFixed(0)} MB`);
          continue;
        }
        const pair = {};
        for (const name of IMPL_NAMES) pair[name] = runRssChild(op, name, D);
        const ratio = pair.ours.peakKiB / pair.reference.peakKiB;
        rss.push({ op, ...pair, ratio });
        console.log(
          `    ${op.label.padEnd(50)} ref ${(pair.reference.peakKiB / 1024).toFixed(0).padStart(5)} MB  ours ${(pair.ours.peakKiB / 1024).toFixed(0).padStart(5)} MB  ${ratio.toFixed(2)}× (ours/ref${op.rssTarget ? `, target ≤${op.rssTarget}×` : ""})`,
        );
      } catch (error) {
        loud([`RSS ${op.label}: ${error.message}`]);
        rss.push({ op, error: error.message });
      }
    }
  }

  const elapsed = (Date.now() - t0) / 1000;
  writeReport({
    results,
    rss,
    fresh,
    machine,
    D,
    args,
    self: SELF,
    ours: describeOurs(),
    elapsed,
    mdPath: args.out,
    svgPath: args.chart,
  });
  console.log(`  wrote ${args.out} and ${args.chart} (${elapsed.toFixed(0)} s)`);
  const bad = results.filter((r) => r.status !== "ok");
  if (bad.length) {
    loud([
      `${bad.length} operation(s) did not agree or failed: ${bad.map((r) => `${r.op.label} (${r.status})`).join(", ")}`,
    ]);
    process.exitCode = 1;
  }
}

await main();
