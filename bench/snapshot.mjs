// The private snapshot's costs (#45): the library's open + getBranch() + getEntries() +
// buildSessionContext() on a generated image session, ours against pi's class, each in a
// fresh Node process (peak RSS = VmHWM, CPU = user + system of the process, wall time); then
// the idle CPU of a process that holds the image strings of many sessions.
//
//   node bench/snapshot.mjs [--gb 1] [--runs 3] [--sessions 200] [--dir <folder>]
//
// Figures go to docs/performance.md ("Images stay on disk until read"); none is asserted.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { writeImageSession } from "../__test__/helpers/images.mjs";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const { values: args } = parseArgs({
  options: {
    gb: { type: "string", default: "1" },
    runs: { type: "string", default: "3" },
    sessions: { type: "string", default: "200" },
    dir: { type: "string", default: join(REPO, ".cache", "bench-snapshot") },
    child: { type: "string" },
    file: { type: "string" },
    "idle-only": { type: "boolean" },
  },
});
const REF = pathToFileURL(
  join(REPO, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core", "session-manager.js"),
).href;
const OURS = pathToFileURL(join(REPO, "index.mjs")).href;
const hwm = () => Number(readFileSync("/proc/self/status", "utf8").match(/VmHWM:\s+(\d+)/)[1]) >> 10;
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const images = (entries) =>
  entries.flatMap((e) =>
    e.type === "message" && Array.isArray(e.message.content) ? e.message.content.filter((c) => c.type === "image") : [],
  );

if (args.child === "ours" || args.child === "ref") {
  // One run: open + getBranch + getEntries + buildSessionContext.
  const { SessionManager } = await import(args.child === "ref" ? REF : OURS);
  const c0 = cpu();
  const t0 = performance.now();
  const sm = SessionManager.open(args.file);
  const tOpen = performance.now() - t0;
  const branch = sm.getBranch();
  const entries = sm.getEntries();
  const context = sm.buildSessionContext();
  const out = {
    images: images(branch).length,
    entries: entries.length,
    messages: context.messages.length,
    openMs: Math.round(tOpen),
    wallMs: Math.round(performance.now() - t0),
    cpuMs: Math.round(cpu() - c0),
    peakMiB: hwm(),
  };
  console.log(JSON.stringify(out));
  process.exit(0);
}

if (args.child === "idle") {
  // Holds the image strings of every session given, then measures 10 s of idle CPU.
  const { SessionManager } = await import(OURS);
  const held = [];
  for (const f of args.file.split(",")) held.push(images(SessionManager.open(f).getBranch()).map((c) => c.data));
  // One read of every string (as a request would), then idle.
  let sum = 0;
  for (const list of held) for (const s of list) sum += s.charCodeAt(s.length - 1);
  await new Promise((r) => setTimeout(r, 1000));
  // The trimmer thread's own ticks (utime + stime, in clock ticks of 10 ms), from /proc.
  const trimTicks = () => {
    let t = 0;
    for (const tid of readdirSync("/proc/self/task")) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      if (!stat.includes("(pi-session-trim)")) continue;
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      t += Number(f[11]) + Number(f[12]);
    }
    return t;
  };
  const c0 = cpu();
  const k0 = trimTicks();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 10_000));
  const ms = performance.now() - t0;
  const pct = ((cpu() - c0) / ms) * 100;
  const trimPct = ((trimTicks() - k0) * 10 * 100) / ms;
  console.log(JSON.stringify({ sessions: held.length, strings: held.flat().length, idleCpuPct: pct, trimPct, sum }));
  process.exit(0);
}

mkdirSync(args.dir, { recursive: true });
const IDLE_ONLY = process.argv.includes("--idle-only");
const gb = Number(args.gb);
const big = join(args.dir, `images-${gb}g.jsonl`);
if (!existsSync(big)) {
  writeImageSession(big, {
    images: Math.round((gb * 1e9) / 3e6),
    bytes: 3_000_000,
    id: "0193a000-0000-7000-8000-0000snapshot",
    cwd: "/tmp/b",
    replies: true,
  });
}
console.log(`session: ${big}, ${(statSync(big).size / 1e9).toFixed(2)} GB`);
const run = (child, env = {}) => {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", child, "--file", big], {
    encoding: "utf8",
    env: { ...process.env, ...env },
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").pop());
};
// Interleaved runs; the page cache is warm (the file was just written or read).
const variants = [
  ["ref", "ref", {}],
  ["ours (snapshot: clone or copy_file_range)", "ours", {}],
  ["ours, snapshot in the private temp folder", "ours", { PI_SESSION_NATIVE_SNAPSHOT: "private" }],
  ["ours, no snapshot (read into memory)", "ours", { PI_SESSION_NATIVE_SNAPSHOT: "memory" }],
];
const results = new Map(variants.map(([name]) => [name, []]));
for (let i = 0; i < (IDLE_ONLY ? 0 : Number(args.runs)); i++) {
  for (const [name, child, env] of variants) results.get(name).push(run(child, env));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
if (!IDLE_ONLY) console.log("| variant | peak RSS MiB | CPU ms | wall ms | open ms |");
if (!IDLE_ONLY) console.log("|---|---:|---:|---:|---:|");
for (const [name, rs] of IDLE_ONLY ? [] : results) {
  const m = (k) => median(rs.map((r) => r[k]));
  console.log(`| ${name} | ${m("peakMiB")} | ${m("cpuMs")} | ${m("wallMs")} | ${m("openMs")} |`);
}

// Idle CPU with many sessions' strings alive (small sessions: ≥ 1 MiB each, 4 images).
const n = Number(args.sessions);
const small = [];
for (let i = 0; i < n; i++) {
  const f = join(args.dir, `idle-${i}.jsonl`);
  if (!existsSync(f)) writeImageSession(f, { images: 4, bytes: 300_000, id: `idle-${i}`, cwd: "/tmp/b" });
  small.push(f);
}
for (const env of [{}, { PI_SESSION_NATIVE_COPY_STRINGS: "1" }]) {
  const r = spawnSync(
    process.execPath,
    [fileURLToPath(import.meta.url), "--child", "idle", "--file", small.join(",")],
    {
      encoding: "utf8",
      env: { ...process.env, ...env },
    },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  console.log(JSON.stringify(env), r.stdout.trim());
}
