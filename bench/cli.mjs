#!/usr/bin/env node
// Agreement check and timings of the `pi-sessions` CLI against pi 1.6.0's SessionManager.
//
//   node bench/cli.mjs --dir SESSION_DIR [--bin target/release/pi-sessions] [--query TEXT] [--runs N]
//
// ls: `pi-sessions ls --dir D --json` vs `SessionManager.listAll(D)` (id, path, modified,
//     messageCount, firstMessage, name must agree, in the same order).
// search: `pi-sessions search TEXT --dir D --json` vs the reference way of finding text in
//     sessions (`list()` then a substring test on `allMessagesText`, as pi's session picker does);
//     the sets of matching sessions are compared for user/assistant text.
// Timings are wall-clock medians of N runs (each a fresh process for the CLI; the reference runs
// in this process, so its Node start-up is not counted).

import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith("--"))
      acc.push([a.slice(2), all[i + 1]?.startsWith("--") || all[i + 1] === undefined ? "true" : all[i + 1]]);
    return acc;
  }, []),
);
if (!args.dir) {
  console.error("usage: node bench/cli.mjs --dir SESSION_DIR [--bin PATH] [--query TEXT] [--runs N]");
  process.exit(2);
}
const dir = resolve(args.dir);
const bin = resolve(args.bin ?? "target/release/pi-sessions");
const query = args.query ?? "Größe";
const runs = Number(args.runs ?? 5);

const { SessionManager } = await import(
  resolve("node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")
);

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function time(fn) {
  const ts = [];
  const cpus = [];
  let last;
  for (let i = 0; i < runs; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    last = await fn();
    ts.push(performance.now() - t);
    const d = process.cpuUsage(c);
    cpus.push((d.user + d.system) / 1000);
  }
  // cpu: this process only (meaningful for the in-process reference, not for the CLI child).
  return { ms: median(ts), cpu: median(cpus), value: last };
}

function cli(...a) {
  return execFileSync(bin, a, { maxBuffer: 1 << 30, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
}

// ls
const ref = await time(() => SessionManager.listAll(dir));
const mine = await time(() => JSON.parse(cli("ls", "--dir", dir, "--json")));
let mismatches = 0;
if (ref.value.length !== mine.value.length) {
  console.log(`ls: ${ref.value.length} sessions in the reference, ${mine.value.length} from the CLI`);
  mismatches++;
}
for (let i = 0; i < Math.min(ref.value.length, mine.value.length); i++) {
  const r = ref.value[i];
  const m = mine.value[i];
  const want = {
    id: r.id,
    path: r.path,
    modified: r.modified.toISOString(),
    messageCount: r.messageCount,
    firstMessage: r.firstMessage,
    name: r.name ?? null,
    cwd: r.cwd,
  };
  for (const k of Object.keys(want)) {
    if (want[k] !== m[k]) {
      if (mismatches++ < 10)
        console.log(
          `ls #${i} ${k}: reference ${JSON.stringify(want[k])?.slice(0, 80)} cli ${JSON.stringify(m[k])?.slice(0, 80)}`,
        );
    }
  }
}
console.log(
  `ls      ${ref.value.length} sessions  reference listAll() ${ref.ms.toFixed(0)} ms (cpu ${ref.cpu.toFixed(0)} ms)  pi-sessions ls ${mine.ms.toFixed(0)} ms  mismatches ${mismatches}`,
);

// search
const refSearch = await time(async () => {
  const all = await SessionManager.listAll(dir);
  return new Set(all.filter((s) => s.allMessagesText.includes(query)).map((s) => s.id));
});
const mySearch = await time(() => {
  let out;
  try {
    out = cli("search", query, "--dir", dir, "--json", "--role", "user");
  } catch (e) {
    out = e.stdout; // exit 1: no match
  }
  const user = JSON.parse(out);
  let out2;
  try {
    out2 = cli("search", query, "--dir", dir, "--json", "--role", "assistant");
  } catch (e) {
    out2 = e.stdout;
  }
  return new Set([...user, ...JSON.parse(out2)].map((h) => h.sessionId));
});
const only = (a, b) => [...a].filter((x) => !b.has(x));
const diff = only(refSearch.value, mySearch.value).length + only(mySearch.value, refSearch.value).length;
console.log(
  `search  ${JSON.stringify(query)} in ${refSearch.value.size} sessions  reference listAll()+filter ${refSearch.ms.toFixed(0)} ms  ` +
    `pi-sessions search (user + assistant runs) ${mySearch.ms.toFixed(0)} ms  set differences ${diff}`,
);
const plain = await time(() => {
  try {
    return cli("search", query, "--dir", dir, "--json").length;
  } catch (e) {
    return e.stdout.length;
  }
});
console.log(`search  one run over all roles: ${plain.ms.toFixed(0)} ms`);

// context: every session's `pi-sessions context --json` vs SessionManager.open(copy).buildSessionContext().messages
const { cpSync, mkdtempSync, readdirSync, rmSync } = await import("node:fs");
const { tmpdir } = await import("node:os");
const { join } = await import("node:path");
const copy = mkdtempSync(join(tmpdir(), "pis-ctx-"));
cpSync(dir, copy, { recursive: true });
let ctxFiles = 0;
let ctxDiff = 0;
const limit = Number(args["context-files"] ?? 50);
for (const f of readdirSync(copy)
  .filter((n) => n.endsWith(".jsonl"))
  .slice(0, limit)) {
  const path = join(copy, f);
  let want;
  try {
    want = SessionManager.open(path)
      .buildSessionContext()
      .messages.map((m) => JSON.stringify(m));
  } catch (e) {
    // pi refuses the file (not a session): the CLI must fail too.
    let failed = false;
    try {
      cli("context", path, "--json");
    } catch {
      failed = true;
    }
    ctxFiles++;
    if (!failed) {
      ctxDiff++;
      console.log(`context ${f}: pi refuses it (${e.message}) but the CLI does not`);
    }
    continue;
  }
  const got = JSON.parse(cli("context", path, "--json")).map((m) => JSON.stringify(m));
  ctxFiles++;
  if (want.length !== got.length || want.some((w, i) => w !== got[i])) {
    ctxDiff++;
    const i = want.findIndex((w, k) => w !== got[k]);
    console.log(
      `context ${f}: ${want.length} vs ${got.length} messages; first difference at #${i}:\n  ref ${want[i]?.slice(0, 200)}\n  cli ${got[i]?.slice(0, 200)}`,
    );
  }
}
rmSync(copy, { recursive: true, force: true });
console.log(`context ${ctxFiles} sessions compared with buildSessionContext(): ${ctxDiff} differ`);
process.exit(mismatches || diff || ctxDiff ? 1 : 0);
