#!/usr/bin/env node
// Peak memory of opening a large session and building its context, in a fresh child
// process per implementation (VmHWM from /proc/self/status).
//
//   node bench/memory.mjs [--gb 1] [--ref] [--full]
//     --ref   also measures the reference (slow)
//     --full  a session without compactions: every message is in the context
//
// The session is generated (seeded) under .bench-data/: mostly base64 images and large
// tool results, with compactions every few thousand entries, as real long sessions have
// (or none, with --full: the context then holds almost the whole file).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { generateSession } from "../support/gen.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");

if (process.argv[2] === "--child") {
  const [, , , impl, file] = process.argv;
  const mod =
    impl === "ref"
      ? await import(
          new URL("../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js", import.meta.url).href
        )
      : await import("../index.mjs");
  const t = performance.now();
  const sm = mod.SessionManager.open(file);
  const ctx = sm.buildSessionContext();
  const ms = performance.now() - t;
  const hwm = Number(
    /VmHWM:\s+(\d+) kB/.exec(await import("node:fs").then((f) => f.readFileSync("/proc/self/status", "utf8")))[1],
  );
  console.log(
    JSON.stringify({
      impl,
      entries: sm.getEntryCount(),
      messages: ctx.messages.length,
      ms: Math.round(ms),
      peakMB: Math.round(hwm / 1024),
    }),
  );
  process.exit(0);
}

const gb = Number(process.argv[process.argv.indexOf("--gb") + 1] || 1) || 1;
const dir = join(ROOT, ".bench-data", "memory");
mkdirSync(dir, { recursive: true });
const full = process.argv.includes("--full");
const file = join(dir, `session-${gb}gb${full ? "-full" : ""}.jsonl`);
if (!existsSync(file)) {
  console.error(`generating ${gb} GB session (images and large tool results${full ? ", no compaction" : ""})…`);
  generateSession(file, {
    seed: 7,
    targetBytes: gb * 1024 ** 3,
    cwd: "/home/dev/src/big",
    startMs: Date.UTC(2025, 0, 1),
    imageChance: 0.35,
    ...(full ? { compactionEvery: [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] } : {}),
  });
}
console.log(`file: ${(statSync(file).size / 1024 ** 2).toFixed(0)} MB`);
const impls = process.argv.includes("--ref") ? ["ours", "ref"] : ["ours"];
for (const impl of impls) {
  const r = spawnSync(
    process.execPath,
    ["--max-old-space-size=16384", fileURLToPath(import.meta.url), "--child", impl, file],
    {
      encoding: "utf8",
    },
  );
  process.stdout.write(r.stdout || `${impl}: failed (${r.status}) ${r.stderr.slice(-500)}\n`);
}
