#!/usr/bin/env node
// Agreement check and timings of the `pi-sessions` CLI against pi 1.6.0's SessionManager.
//
//   node bench/cli.mjs --dir SESSION_DIR [--bin target/release/pi-sessions] [--query TEXT] [--runs N]
//   node bench/cli.mjs --lifecycle [--bin …] [--runs N] [--big-mb 1024] [--data .bench-data]
//   node bench/cli.mjs --prune [--bin …] [--before OTHER_BIN] [--runs N] [--big-mb 1024] [--data .bench-data]
//   node bench/cli.mjs --inspect [--bin …] [--before OTHER_BIN] [--runs N] [--big-mb 1024] [--data .bench-data]
//
// ls: `pi-sessions ls --dir D --json` vs `SessionManager.listAll(D)` (id, path, modified,
//     messageCount, firstMessage, name must agree, in the same order).
// search: `pi-sessions search TEXT --dir D --json` vs the reference way of finding text in
//     sessions (`list()` then a substring test on `allMessagesText`, as pi's session picker does);
//     the sets of matching sessions are compared for user/assistant text.
// Timings are wall-clock medians of N runs (each a fresh process for the CLI; the reference runs
// in this process, so its Node start-up is not counted).
//
// --lifecycle: archive / restore / prune (bench/cli-results.md). The 1,000-session folder of
// support/gen.mjs and a ~1 GB session are generated at run time (cached under --data, never
// committed), copied into a temp agent dir, then per run: `archive --older-than 0` of the folder,
// the same `list()` without them, `restore --all`, equal sha256 and mtimes and the same `list()`
// as before (checked before anything is timed); the 1 GB session archived and restored (sha256
// equal), and `prune` of it against a `cp` of it. Wall time around the child process, peak RSS
// from /usr/bin/time (%M), page cache warm.
//
// --prune: `prune` of the ~1 GB session only, against `cp` and `cp` + `sync` of it; with
// `--before`, the same prune by another build, interleaved run by run (cp + sync, cp, prune by
// --before, prune by --bin, each on a fresh copy, after a `sync`), and the two pruned files
// must be byte-identical (sha256); the first pruned file must give the same `context --json`.
//
// --inspect: `show --json`, `tree`, `context --json`, `export --format json`, `export` (Markdown)
// and `check --json` of the ~1 GB session (`--only PREFIX`: those commands only), by --bin and by `--before OTHER_BIN` (optional), interleaved run by run;
// wall time and peak RSS, medians; both builds must write the same bytes (sha256 of stdout).

import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith("--"))
      acc.push([a.slice(2), all[i + 1]?.startsWith("--") || all[i + 1] === undefined ? "true" : all[i + 1]]);
    return acc;
  }, []),
);
const bin = resolve(args.bin ?? "target/release/pi-sessions");
if (args.lifecycle) process.exit(await lifecycle());
if (args.prune) process.exit(await pruneBench());
if (args.inspect) process.exit(await inspectBench());
if (!args.dir) {
  console.error("usage: node bench/cli.mjs --dir SESSION_DIR [--bin PATH] [--query TEXT] [--runs N]");
  process.exit(2);
}
const dir = resolve(args.dir);
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
const { cpSync, mkdtempSync, readdirSync, rmSync } = fs;
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

async function lifecycle() {
  const gen = await import("../support/gen.mjs");
  const { SessionManager } = await import(
    resolve("node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")
  );
  const n = Number(args.runs ?? 3);
  const MB = 1024 * 1024;
  const root = resolve(args.data ?? ".bench-data");
  const data = gen.ensureBenchData(root, { want: ["folder"], log: (m) => console.error(m) });
  const bigMb = Number(args["big-mb"] ?? 1024);
  const bigSrc = join(data.base, `big-${bigMb}MB.jsonl`);
  if (!fs.existsSync(bigSrc)) {
    console.error(`generating a ${bigMb} MB session…`);
    gen.generateSession(`${bigSrc}.tmp`, {
      seed: 4242,
      targetBytes: bigMb * MB,
      cwd: "/home/dev/src/pi-big",
      startMs: Date.UTC(2025, 0, 2),
    });
    fs.renameSync(`${bigSrc}.tmp`, bigSrc);
  }
  const work = fs.mkdtempSync(join(tmpdir(), "pis-lifecycle-"));
  const agent = join(work, "agent");
  const folder = join(agent, "sessions", gen.encodeCwd(gen.BENCH_CWD));
  fs.cpSync(data.folder.dir, folder, { recursive: true, preserveTimestamps: true });
  const old = new Date(Date.now() - 3600_000);
  const names = () =>
    fs
      .readdirSync(folder)
      .filter((f) => f.endsWith(".jsonl"))
      .sort();
  for (const f of names()) {
    const st = fs.statSync(join(folder, f));
    if (st.mtimeMs > old.getTime()) fs.utimesSync(join(folder, f), old, old);
  }
  const sha = (f) => createHash("sha256").update(fs.readFileSync(f)).digest("hex");
  const state = () => names().map((f) => [f, sha(join(folder, f)), fs.statSync(join(folder, f)).mtimeMs]);
  const list = async () => JSON.stringify(await SessionManager.list(gen.BENCH_CWD, folder));
  const run = (argv, env = {}) => {
    const t = performance.now();
    const r = spawnSync("/usr/bin/time", ["-f", "%M", bin, "--agent-dir", agent, ...argv], {
      encoding: "utf8",
      maxBuffer: 1 << 30,
      env: { ...process.env, ...env },
    });
    const ms = performance.now() - t;
    const rss = Number(r.stderr.trim().split("\n").pop()) / 1024;
    if (r.status !== 0) throw new Error(`${argv.join(" ")}: exit ${r.status}\n${r.stderr}`);
    return { ms, rss, json: r.stdout.startsWith("{") ? JSON.parse(r.stdout) : null };
  };
  const plain = (cmd, argv) => {
    const t = performance.now();
    const r = spawnSync(cmd, argv);
    if (r.status !== 0) throw new Error(`${cmd} failed`);
    return performance.now() - t;
  };
  let failures = 0;
  const check = (ok, what) => {
    if (!ok) {
      failures++;
      console.log(`MISMATCH: ${what}`);
    }
  };

  // The folder: archive --older-than, list() without them, restore --all, same bytes and list().
  const before = state();
  const listed = await list();
  const bytes = before.reduce((s, [f]) => s + fs.statSync(join(folder, f)).size, 0);
  const arch = [];
  const rest = [];
  let ratio = 0;
  for (let i = 0; i < n; i++) {
    const a = run(["archive", "--older-than", "0", "--cwd", gen.BENCH_CWD, "--json"]);
    arch.push(a);
    ratio = a.json.ratio;
    check(a.json.archived.length === before.length, `archived ${a.json.archived.length} of ${before.length}`);
    check(JSON.parse(await list()).length === 0, "list() still shows archived sessions");
    const r = run(["restore", "--all", "--json"]);
    rest.push(r);
    check(JSON.stringify(state()) === JSON.stringify(before), "restored bytes or mtimes differ");
    check((await list()) === listed, "list() differs after restore");
  }
  const med = (xs, k) => median(xs.map((x) => x[k]));
  const row = (what, input, xs) =>
    `| ${what} | ${(input / MB).toFixed(0)} MB | ${(med(xs, "ms") / 1000).toFixed(2)} s | ${(input / MB / (med(xs, "ms") / 1000)).toFixed(0)} MB/s | ${med(xs, "rss").toFixed(0)} MB |`;
  const rows = [
    "| operation | input | time | throughput | peak RSS |",
    "| --- | --- | --- | --- | --- |",
    row(`archive --older-than 0, ${before.length} sessions`, bytes, arch),
    row(`restore --all, ${before.length} sessions`, bytes, rest),
  ];
  const folderRatio = ratio;

  // One big session: archive, restore, and prune against cp.
  const bigDir = join(agent, "sessions", "--home-dev-src-pi-big--");
  fs.mkdirSync(bigDir, { recursive: true });
  const big = join(bigDir, "2025-01-02T00-00-00-000Z_big.jsonl");
  fs.copyFileSync(bigSrc, big);
  fs.utimesSync(big, old, old);
  const bigBytes = fs.statSync(big).size;
  const bigSha = sha(big);
  const bigMtime = fs.statSync(big).mtimeMs;
  const ba = [];
  const br = [];
  let bigRatio = 0;
  for (let i = 0; i < n; i++) {
    const a = run(["archive", big, "--json"]);
    ba.push(a);
    bigRatio = a.json.ratio;
    const r = run(["restore", "--all", "--json"]);
    br.push(r);
    check(sha(big) === bigSha, "big session's bytes differ after restore");
    check(fs.statSync(big).mtimeMs === bigMtime, "big session's mtime differs after restore");
  }
  rows.push(row("archive, one session", bigBytes, ba), row("restore, one session", bigBytes, br));
  const copy = join(bigDir, "2025-01-02T00-00-00-000Z_copy.jsonl");
  const contextSha = (f) => {
    const out = join(work, "context.json");
    const fd = fs.openSync(out, "w");
    spawnSync(bin, ["--agent-dir", agent, "context", f, "--json"], { stdio: ["ignore", fd, "inherit"] });
    fs.closeSync(fd);
    return sha(out);
  };
  const want = contextSha(big);
  const cps = [];
  const syncedCps = [];
  const prunes = [];
  let pruned;
  // Each timed step starts with no dirty pages (`sync`), so none pays for another's writeback.
  const clean = () => {
    fs.rmSync(copy, { force: true });
    for (const f of fs.readdirSync(bigDir)) if (f.includes(".bak")) fs.rmSync(join(bigDir, f));
    spawnSync("sync");
  };
  for (let i = 0; i < n; i++) {
    clean();
    syncedCps.push({ ms: plain("sh", ["-c", `cp '${big}' '${copy}' && sync '${copy}'`]), rss: 0 });
    clean();
    cps.push({ ms: plain("cp", [big, copy]), rss: 0 });
    fs.utimesSync(copy, old, old);
    spawnSync("sync");
    const p = run(["prune", copy, "--json"]);
    prunes.push(p);
    pruned = p.json;
    if (i === 0) check(contextSha(copy) === want, "pruned context differs");
  }
  rows.push(
    row("cp, one session", bigBytes, cps),
    row("cp + sync (fsync of the copy), one session", bigBytes, syncedCps),
    row("prune (with backup; fsync), one session", bigBytes, prunes),
  );
  console.log(rows.join("\n"));
  console.log(
    `\nratio: folder ${folderRatio}x, one session ${bigRatio}x; prune kept ${pruned.entriesAfter} of ${pruned.entriesBefore} entries, ` +
      `${(pruned.bytesBefore / MB).toFixed(0)} -> ${(pruned.bytesAfter / MB).toFixed(0)} MB; prune / cp = ${(med(prunes, "ms") / med(cps, "ms")).toFixed(2)}, prune / (cp + sync) = ${(med(prunes, "ms") / med(syncedCps, "ms")).toFixed(2)}; ` +
      `median of ${n} runs; checks ${failures ? `FAILED (${failures})` : "passed"}`,
  );
  fs.rmSync(work, { recursive: true, force: true });
  return failures ? 1 : 0;
}

async function bigSession(fs, join, gen) {
  const root = resolve(args.data ?? ".bench-data");
  fs.mkdirSync(root, { recursive: true });
  const bigMb = Number(args["big-mb"] ?? 1024);
  const bigSrc = join(root, `big-${bigMb}MB.jsonl`);
  if (!fs.existsSync(bigSrc)) {
    console.error(`generating a ${bigMb} MB session…`);
    gen.generateSession(`${bigSrc}.tmp`, {
      seed: 4242,
      targetBytes: bigMb * 1024 * 1024,
      cwd: "/home/dev/src/pi-big",
      startMs: Date.UTC(2025, 0, 2),
    });
    fs.renameSync(`${bigSrc}.tmp`, bigSrc);
  }
  return bigSrc;
}

async function pruneBench() {
  const gen = await import("../support/gen.mjs");
  const n = Number(args.runs ?? 3);
  const MB = 1024 * 1024;
  const bigSrc = await bigSession(fs, join, gen);
  const bins = args.before
    ? [
        ["before", resolve(args.before)],
        ["after", bin],
      ]
    : [["after", bin]];
  const work = fs.mkdtempSync(join(tmpdir(), "pis-prune-"));
  const agent = join(work, "agent");
  const dir = join(agent, "sessions", "--home-dev-src-pi-big--");
  fs.mkdirSync(dir, { recursive: true });
  const copy = join(dir, "2025-01-02T00-00-00-000Z_big.jsonl");
  const old = new Date(Date.now() - 3600_000);
  const bytes = fs.statSync(bigSrc).size;
  const sha = (f) => {
    const h = createHash("sha256");
    const fd = fs.openSync(f, "r");
    const buf = Buffer.alloc(8 * MB);
    for (let k; (k = fs.readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, k));
    fs.closeSync(fd);
    return h.digest("hex");
  };
  const clean = () => {
    for (const f of fs.readdirSync(dir)) fs.rmSync(join(dir, f));
    spawnSync("sync");
  };
  const fresh = () => {
    clean();
    fs.copyFileSync(bigSrc, copy);
    fs.utimesSync(copy, old, old);
    spawnSync("sync");
  };
  const timed = (cmd, argv) => {
    const t = performance.now();
    const r = spawnSync("/usr/bin/time", ["-f", "%M", cmd, ...argv], { encoding: "utf8", maxBuffer: 1 << 26 });
    const ms = performance.now() - t;
    if (r.status !== 0) throw new Error(`${cmd} ${argv.join(" ")}: exit ${r.status}\n${r.stderr}`);
    return { ms, rss: Number(r.stderr.trim().split("\n").pop()) / 1024, out: r.stdout };
  };
  const context = (b, f) => {
    const out = join(work, "context.json");
    const fd = fs.openSync(out, "w");
    spawnSync(b, ["--agent-dir", agent, "context", f, "--json"], { stdio: ["ignore", fd, "inherit"] });
    fs.closeSync(fd);
    return sha(out);
  };
  fresh();
  const want = context(bin, copy);
  const res = { cp: [], cpSync: [] };
  for (const [name] of bins) res[name] = [];
  const shas = {};
  let report;
  let failures = 0;
  for (let i = 0; i < n; i++) {
    clean();
    res.cpSync.push(timed("sh", ["-c", `cp '${bigSrc}' '${copy}' && sync '${copy}'`]));
    clean();
    res.cp.push(timed("cp", [bigSrc, copy]));
    for (const [name, b] of bins) {
      fresh();
      const p = timed(b, ["--agent-dir", agent, "prune", copy, "--json"]);
      res[name].push(p);
      report = JSON.parse(p.out);
      const s = sha(copy);
      if (shas[name] === undefined) shas[name] = s;
      if (shas[name] !== s) failures++;
      if (i === 0 && context(bin, copy) !== want) {
        failures++;
        console.log(`MISMATCH: ${name}: the pruned session's context differs`);
      }
    }
  }
  if (args.before && shas.before !== shas.after) {
    failures++;
    console.log(`MISMATCH: the pruned files differ (before ${shas.before}, after ${shas.after})`);
  }
  const med = (xs, k) => median(xs.map((x) => x[k]));
  const s = (xs) => med(xs, "ms") / 1000;
  const row = (what, xs, rss = true) =>
    `| ${what} | ${s(xs).toFixed(2)} s | ${(bytes / MB / s(xs)).toFixed(0)} MB/s | ${rss ? `${med(xs, "rss").toFixed(0)} MB` : "-"} | ${(s(xs) / s(res.cp)).toFixed(2)}x | ${(s(xs) / s(res.cpSync)).toFixed(2)}x |`;
  console.log(`one session of ${(bytes / MB).toFixed(0)} MB, median of ${n} interleaved runs\n`);
  console.log(
    "| operation | time | throughput | peak RSS | / cp | / (cp + sync) |\n| --- | --- | --- | --- | --- | --- |",
  );
  console.log(row("cp", res.cp, false));
  console.log(row("cp + sync (fsync of the copy)", res.cpSync, false));
  for (const [name] of bins) console.log(row(`prune (${name}; backup, fsync)`, res[name]));
  console.log(
    `\nprune kept ${report.entriesAfter} of ${report.entriesBefore} entries, ${(report.bytesBefore / MB).toFixed(0)} -> ${(report.bytesAfter / MB).toFixed(0)} MB; ` +
      `every run: ${Object.entries(res)
        .map(([k, xs]) => `${k} ${xs.map((x) => (x.ms / 1000).toFixed(2)).join("/")} s`)
        .join(", ")}; pruned sha256 ${Object.entries(shas)
        .map(([k, v]) => `${k} ${v.slice(0, 12)}`)
        .join(", ")}; checks ${failures ? `FAILED (${failures})` : "passed"}`,
  );
  fs.rmSync(work, { recursive: true, force: true });
  return failures ? 1 : 0;
}

async function inspectBench() {
  const gen = await import("../support/gen.mjs");
  const n = Number(args.runs ?? 3);
  const MB = 1024 * 1024;
  const bigSrc = await bigSession(fs, join, gen);
  const bytes = fs.statSync(bigSrc).size;
  const bins = args.before
    ? [
        ["before", resolve(args.before)],
        ["after", bin],
      ]
    : [["after", bin]];
  const work = fs.mkdtempSync(join(tmpdir(), "pis-inspect-"));
  const agent = join(work, "agent");
  fs.mkdirSync(join(agent, "sessions"), { recursive: true });
  const out = join(work, "out");
  const commands = [
    ["show --json", ["show", bigSrc, "--json"]],
    ["tree", ["tree", bigSrc, "--width", "120"]],
    ["context --json", ["context", bigSrc, "--json"]],
    ["export --format json", ["export", bigSrc, "--format", "json"]],
    ["export (Markdown)", ["export", bigSrc]],
    ["check --json", ["check", bigSrc, "--json"]],
  ].filter(([what]) => !args.only || what.startsWith(args.only));
  const sha = (f) => createHash("sha256").update(fs.readFileSync(f)).digest("hex");
  const timed = (b, argv) => {
    const fd = fs.openSync(out, "w");
    const t = performance.now();
    const r = spawnSync("/usr/bin/time", ["-f", "%M", b, "--agent-dir", agent, "--no-color", ...argv], {
      stdio: ["ignore", fd, "pipe"],
      encoding: "utf8",
    });
    const ms = performance.now() - t;
    fs.closeSync(fd);
    if (r.status !== 0) throw new Error(`${b} ${argv.join(" ")}: exit ${r.status}\n${r.stderr}`);
    return { ms, rss: Number(r.stderr.trim().split("\n").pop()) / 1024, sha: sha(out), size: fs.statSync(out).size };
  };
  let failures = 0;
  console.log(`one session of ${(bytes / MB).toFixed(0)} MB, median of ${n} interleaved runs\n`);
  const head = bins.map(([name]) => `${name}: time | ${name}: peak RSS`).join(" | ");
  console.log(`| command | output | ${head} |${args.before ? " after / before (time, RSS) |" : ""}`);
  console.log(`| --- | --- |${" --- | --- |".repeat(bins.length)}${args.before ? " --- |" : ""}`);
  for (const [what, argv] of commands) {
    const res = Object.fromEntries(bins.map(([name]) => [name, []]));
    for (let i = 0; i < n; i++) for (const [name, b] of bins) res[name].push(timed(b, argv));
    const shas = new Set(Object.values(res).flatMap((xs) => xs.map((x) => x.sha)));
    if (shas.size !== 1) {
      failures++;
      console.log(`MISMATCH: ${what}: the builds wrote different bytes`);
    }
    const med = (xs, k) => median(xs.map((x) => x[k]));
    const cells = bins.map(
      ([name]) => `${(med(res[name], "ms") / 1000).toFixed(2)} s | ${med(res[name], "rss").toFixed(0)} MB`,
    );
    const ratio = args.before
      ? ` ${(med(res.after, "ms") / med(res.before, "ms")).toFixed(2)}x, ${(med(res.after, "rss") / med(res.before, "rss")).toFixed(3)}x |`
      : "";
    console.log(`| ${what} | ${(res.after[0].size / MB).toFixed(1)} MB | ${cells.join(" | ")} |${ratio}`);
  }
  fs.rmSync(work, { recursive: true, force: true });
  return failures ? 1 : 0;
}
