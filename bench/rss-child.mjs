// Runs one operation once in a fresh process and reports its peak RSS.
// Spawned by bench/run.mjs: BENCH_RSS_ARGS = {"op": key, "impl": "reference"|"ours"|"floor", "D": dataContext}

import { loadImpl, peakKiB } from "./impls.mjs";
import { defineOps } from "./ops.mjs";

const { op: key, impl: name, D } = JSON.parse(process.env.BENCH_RSS_ARGS);
const op = defineOps().find((o) => o.key === key);
if (!op) throw new Error(`unknown op ${key}`);
const impl = name === "floor" ? { name, mod: null } : await loadImpl(name);
const st = await op.setup?.(impl, D);
const x = await op.prepare?.(impl, D, st);
const baseline = peakKiB();
const t0 = performance.now();
let result = await op.run(impl, D, st, x);
const ms = performance.now() - t0;
const peak = peakKiB();
await op.cleanup?.(impl, D, st, x, result);
result = undefined;
process.stdout.write(`${JSON.stringify({ op: key, impl: name, baselineKiB: baseline, peakKiB: peak, ms })}\n`);
