// bench:pi: pi's own CLI end to end, on Node 22, against the loopback mock model of the pi tests, through
// each channel a pi user has: stock `pi` (its bundle), `pi-native` (the same bundle, every static of its
// SessionManager class ours) and stock `pi` with this package installed as a pi package (`pi install`: its
// extension swaps every static by default; pi runs its startup flows before extensions load).
//
//   npm run bench:pi                 5 interleaved rounds (~6 min)
//   node bench/pi.mjs --rounds 3     fewer rounds
//   node bench/pi.mjs --no-resume    skip the /resume flows (they need tmux)
//   node bench/pi.mjs --profile-only only the PI_SESSION_NATIVE_TRACE call profile of pi-native
//   node bench/pi.mjs --flows resumeIn --impls stock,package   some flows, some implementations
//   node bench/pi.mjs --flows resume,resumeIn --sessions 5000  /resume over another folder size (generated once)
//   node bench/pi.mjs --flows printTurn --print-session FILE   the print turn on another session (bench:scale: 1 GB)
//   node bench/pi.mjs --flows printTurn,rpcTurns --print-session FILE   and a long-lived pi (RPC) running 3 turns on it
//
// Flows (each a fresh pi process, as every `pi` invocation is):
//   startup      `pi -p hi` in an empty project (a new session, one short turn)
//   print turn   `pi --session <100 MB session> -p "…"`: wall time and peak RSS (/usr/bin/time, else VmHWM polling)
//   /resume      `pi -r` in a real TUI under tmux, over a 1,000-session folder (323 MB): time until the picker has
//                loaded every session (its header shows "◉ Current Folder" instead of "Loading n/N"). pi handles -r
//                before extensions load: the pi package does not reach it (not run for it).
//   in-session /resume   `pi --session-dir <folder>`, then `/resume` typed in the TUI: time from its Enter until
//                the picker has loaded every session. The flow the pi package speeds up.
// Rounds interleave the implementations (the order rotates); medians and min–max are reported, ratio =
// stock / other (>1: faster than stock; for RSS <1: uses more). Writes bench/pi-results.md. The 100 MB session is
// copied before every run (pi appends to it), with its header's cwd set to the project. Whether rolldown is
// installed is printed with the results: pi-native no longer uses it (any figure here is without it).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { makeSide, node22, piCommand, REPO, startMockModel } from "../support/pi-harness.mjs";
import { ensureBenchData, GEN_VERSION, generateFolder, hashSeed } from "../support/gen.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i < 0 ? dflt : Number(argv[i + 1]);
};
const ROUNDS = opt("--rounds", 5);
/** Sessions in the /resume folder; other than 1,000 the results go to .bench-data/, not bench/pi-results.md. */
const SESSIONS = opt("--sessions", 1000);
const COUNT = SESSIONS.toLocaleString("en-US");
const list = (name, dflt) => {
  const i = argv.indexOf(name);
  return i < 0 ? dflt : argv[i + 1].split(",");
};
const IMPLS = list("--impls", ["stock", "native", "package"]);
/** The print turn's session: the bench's 100 MB one, or another (results then go to stdout only). */
const PRINT_SESSION = list("--print-session", null)?.join(",") ?? null;
const FLOWS = list("--flows", ["startup", "printTurn", "resume", "resumeIn"]);

const PROFILE_ONLY = argv.includes("--profile-only");
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const RESUME = !argv.includes("--no-resume") && hasTmux && (FLOWS.includes("resume") || FLOWS.includes("resumeIn"));
const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
const log = (s) => process.stderr.write(`${s}\n`);

const N22 = node22();
log(
  `bench:pi on ${execFileSync(N22, ["--version"]).toString().trim()}; ${ROUNDS} rounds; resume ${RESUME ? "under tmux" : hasTmux ? "skipped" : "skipped (no tmux)"}`,
);

// ---------------------------------------------------------------------------
// Data: the 100 MB session of bench/, and a 1,000-session folder whose sessions belong to a project dir of ours
// (pi's picker lists the sessions of the current folder, and the bench's own folder is for a made-up cwd).

const DATA = join(REPO, ".bench-data");
const printSource = PRINT_SESSION ?? ensureBenchData(DATA, { want: ["L"], log }).L.file;
const printName = PRINT_SESSION
  ? `the ${(statSync(PRINT_SESSION).size / 2 ** 20).toFixed(0)} MB session`
  : "the 100 MB session";
const base = join(DATA, `v${GEN_VERSION}-seed42`);
const resumeCwd = join(base, "pi-resume-project");
const folder = join(base, `pi-folder-${SESSIONS}`);
if (RESUME) {
  mkdirSync(resumeCwd, { recursive: true });
  const mark = join(base, `pi-folder-${SESSIONS}.json`);
  const want = JSON.stringify({ cwd: resumeCwd, count: SESSIONS });
  if (!existsSync(mark) || readFileSync(mark, "utf8") !== want) {
    log(`generating a ${COUNT}-session folder (~${(SESSIONS * 0.32).toFixed(0)} MB) for the /resume flow…`);
    rmSync(folder, { recursive: true, force: true });
    generateFolder(folder, {
      seed: hashSeed(42, "folder"),
      count: SESSIONS,
      totalBytes: SESSIONS * 300 * 2 ** 10,
      cwd: resumeCwd,
    });
    writeFileSync(mark, want);
  }
}

// ---------------------------------------------------------------------------
// Sides: one agent dir and project per implementation; a context window that holds the whole 100 MB session's
// context, so the print turn is one turn (no automatic compaction in the middle of it).

const model = await startMockModel(undefined);
const LABELS = { stock: "stock", native: "nativ", package: "pkgin" }; // same length: paths end up in prompts
const sides = Object.fromEntries(
  IMPLS.map((impl) => [impl, makeSide(LABELS[impl], model.port, { contextWindow: 2_000_000 })]),
);
/** The command line of an implementation: the pi package runs stock pi (its agent dir has the package). */
const commandOf = (impl, args) => piCommand(impl === "package" ? "stock" : impl, args);
if (sides.package) {
  // `pi install <the packed package>`, unpacked: what a user's `pi install npm:pi-session-native` puts in pi's npm
  // folder. Not this checkout: its node_modules holds a copy of pi, which the extension's import of pi would
  // resolve to instead of the module pi runs.
  const root = sides.package.root;
  const tgz = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", root], { cwd: REPO })
    .toString()
    .trim()
    .split("\n")
    .pop();
  execFileSync("tar", ["xzf", join(root, tgz), "-C", root]);
  const [cmd, a] = commandOf("package", ["install", join(root, "package")]);
  execFileSync(cmd, a, { cwd: sides.package.proj, env: sides.package.env, stdio: "ignore" });
}
const rolldown = spawnSync(process.execPath, ["-e", "require.resolve('rolldown')"], { cwd: REPO }).status === 0;

/** Copies a session with its header's cwd set to `cwd`, in chunks (the 1 GB session of bench:scale too). */
function copySession(src, dst, cwd) {
  const input = openSync(src, "r");
  const output = openSync(dst, "w");
  try {
    const buf = Buffer.allocUnsafe(16 * 2 ** 20);
    let got = readSync(input, buf, 0, buf.length, 0);
    const nl = buf.subarray(0, got).indexOf(10);
    const header = JSON.parse(buf.subarray(0, nl).toString("utf8"));
    header.cwd = cwd;
    writeSync(output, JSON.stringify(header));
    writeSync(output, buf, nl, got - nl);
    for (let pos = got; (got = readSync(input, buf, 0, buf.length, pos)) > 0; pos += got)
      writeSync(output, buf, 0, got);
  } finally {
    closeSync(input);
    closeSync(output);
  }
}

/** Run pi once; { ms, rssMB, cpuS (user + system, with /usr/bin/time), code, stdout, stderr }. */
function runOnce(impl, args, { env = {}, cwd } = {}) {
  const side = sides[impl];
  const [cmd, a] = commandOf(impl, args);
  const full = TIME ? [TIME, ["-f", "%M %U %S", cmd, ...a]] : [cmd, a];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(full[0], full[1], {
      cwd: cwd ?? side.proj,
      env: { ...side.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let hwm = 0;
    const poll = TIME
      ? null
      : setInterval(() => {
          try {
            const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
            if (m) hwm = Math.max(hwm, Number(m[1]));
          } catch {}
        }, 10);
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - t0;
      if (poll) clearInterval(poll);
      let rssKB = hwm;
      let cpuS = null;
      if (TIME) {
        const lines = stderr.trimEnd().split("\n");
        const [kb, user, sys] = lines.pop().split(" ").map(Number);
        rssKB = kb;
        cpuS = user + sys;
        stderr = lines.join("\n");
      }
      if (code !== 0) reject(new Error(`${impl} ${args.join(" ")} exited ${code}: ${stderr.slice(-500)}`));
      else resolve({ ms, rssMB: rssKB / 1024, cpuS, stdout, stderr });
    });
  });
}

const flows = {
  startup: async (impl) => runOnce(impl, ["-p", "hi"]),
  printTurn: async (impl, env = {}) => {
    const side = sides[impl];
    const file = join(side.root, "L.jsonl");
    copySession(printSource, file, side.proj);
    const r = await runOnce(impl, ["--session", file, "-p", "one more turn, please"], { env });
    rmSync(file, { force: true });
    return r;
  },
  rpcTurns: async (impl, env = {}) => rpcTurns(impl, env),
  resume: async (impl, env = {}) => resumeOnce(impl, env),
  resumeIn: async (impl, env = {}) => resumeInSession(impl, env),
};
/**
 * A long-lived pi: `pi --mode rpc --session <the print session>`, three prompts, each awaited to
 * `agent_settled`, then stdin closed. Wall time and peak RSS (and CPU) of the whole process.
 */
function rpcTurns(impl, env = {}) {
  const side = sides[impl];
  const file = join(side.root, "L.jsonl");
  copySession(printSource, file, side.proj);
  const [cmd, a] = commandOf(impl, ["--mode", "rpc", "--session", file]);
  const full = TIME ? [TIME, ["-f", "%M %U %S", cmd, ...a]] : [cmd, a];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(full[0], full[1], {
      cwd: side.proj,
      env: { ...side.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    let buf = "";
    let turn = 0;
    const prompt = () =>
      child.stdin.write(`${JSON.stringify({ id: `t${++turn}`, type: "prompt", message: `rpc turn ${turn}` })}\n`);
    child.stdout.setEncoding("utf8").on("data", (d) => {
      buf += d;
      for (let nl; (nl = buf.indexOf("\n")) >= 0; buf = buf.slice(nl + 1)) {
        const rec = JSON.parse(buf.slice(0, nl));
        if (rec.type === "response" && rec.success === false) child.stdin.end();
        if (rec.type !== "agent_settled") continue;
        if (turn < 3) prompt();
        else child.stdin.end();
      }
    });
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - t0;
      rmSync(file, { force: true });
      let rssMB = 0;
      let cpuS = null;
      if (TIME) {
        const lines = stderr.trimEnd().split("\n");
        const [kb, user, sys] = lines.pop().split(" ").map(Number);
        rssMB = kb / 1024;
        cpuS = user + sys;
      }
      if (code !== 0 || turn < 3)
        reject(new Error(`${impl} rpc exited ${code} after ${turn} turns: ${stderr.slice(-500)}`));
      else resolve({ ms, rssMB, cpuS });
    });
    prompt();
  });
}

/** Which implementations a flow runs on: pi handles -r before extensions load (the package = stock there). */
const implsOf = (flow) => (flow === "resume" ? IMPLS.filter((i) => i !== "package") : IMPLS);

/** pi (`impl`) with `args` in a detached 160×48 tmux session `name`, in the /resume project. */
function tmuxStart(impl, args, env, name) {
  const [cmd, a] = commandOf(impl, args);
  const vars = { ...sides[impl].env, TERM: "xterm-256color", ...env };
  delete vars.NO_COLOR;
  const q = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
  const shell = `cd ${q(resumeCwd)} && exec env -i ${Object.entries(vars)
    .map(([k, v]) => `${k}=${q(v)}`)
    .join(" ")} ${q(cmd)} ${a.map(q).join(" ")}`;
  execFileSync("tmux", ["new-session", "-d", "-s", name, "-x", "160", "-y", "48", shell]);
}

/** `pi -r` in a detached tmux session; ms until the picker shows it has loaded every session. */
async function resumeOnce(impl, env = {}) {
  const name = `pi-bench-${process.pid}-${impl}`;
  const t0 = performance.now();
  tmuxStart(impl, ["-r", "--session-dir", folder], env, name);
  try {
    for (;;) {
      const screen = spawnSync("tmux", ["capture-pane", "-p", "-t", name], { encoding: "utf8" }).stdout ?? "";
      if (screen.includes("◉ Current Folder")) {
        const ms = performance.now() - t0;
        if (!/Resume Session/.test(screen) || /No sessions in current folder/.test(screen))
          throw new Error(`${impl}: the picker shows no sessions:\n${screen}`);
        return { ms };
      }
      if (performance.now() - t0 > 120_000)
        throw new Error(`${impl}: the picker did not finish loading in 120 s:\n${screen}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    // C-c twice: pi exits (and the trace, if any, is written); then the session goes
    spawnSync("tmux", ["send-keys", "-t", name, "C-c"]);
    await new Promise((r) => setTimeout(r, 150));
    spawnSync("tmux", ["send-keys", "-t", name, "C-c"]);
    await new Promise((r) => setTimeout(r, 600));
    spawnSync("tmux", ["kill-session", "-t", name]);
  }
}

/** `pi --session-dir <folder>` in tmux, then `/resume`: ms from its Enter until the picker has loaded every session. */
async function resumeInSession(impl, env = {}) {
  const name = `pi-bench-${process.pid}-${impl}-in`;
  const screen = () => spawnSync("tmux", ["capture-pane", "-p", "-t", name], { encoding: "utf8" }).stdout ?? "";
  tmuxStart(impl, ["--session-dir", folder], env, name);
  try {
    const start = performance.now();
    while (!/mock-model/.test(screen())) {
      if (performance.now() - start > 60_000) throw new Error(`${impl}: pi did not start in 60 s:\n${screen()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, 300)); // let the startup settle (extensions, the footer)
    spawnSync("tmux", ["send-keys", "-t", name, "-l", "/resume"]);
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    spawnSync("tmux", ["send-keys", "-t", name, "Enter"]);
    for (;;) {
      const s = screen();
      if (s.includes("◉ Current Folder") && /\(\d+\/\d+\)/.test(s)) return { ms: performance.now() - t0 };
      if (performance.now() - t0 > 120_000)
        throw new Error(`${impl}: the picker did not finish loading in 120 s:\n${s}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    spawnSync("tmux", ["send-keys", "-t", name, "Escape"]);
    await new Promise((r) => setTimeout(r, 150));
    spawnSync("tmux", ["send-keys", "-t", name, "C-d"]);
    await new Promise((r) => setTimeout(r, 600));
    spawnSync("tmux", ["kill-session", "-t", name]);
  }
}

// ---------------------------------------------------------------------------
// The call profile (pi-native only): PI_SESSION_NATIVE_TRACE on one print turn and one /resume.

async function profile() {
  const out = {};
  const file = join(sides.native.root, "trace.json");
  for (const [flow, run] of [["printTurn", flows.printTurn], ...(RESUME ? [["resume", flows.resume]] : [])]) {
    rmSync(file, { force: true });
    await run("native", { PI_SESSION_NATIVE_TRACE: file });
    for (let i = 0; i < 40 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
    out[flow] = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null;
  }
  return out;
}

function profileTable(p) {
  if (!p) return "(no trace written)\n";
  const f = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  const rows = Object.entries(p.methods).map(
    ([name, s]) =>
      `| \`${name}\` | ${s.calls} | ${s.nested || ""} | ${f(s.ms)} | ${f(s.first ?? 0)} | ${s.calls > 1 ? f((s.ms - (s.first ?? 0)) / (s.calls - 1)) : ""} | ${s.cbMs ? f(s.cbMs) : ""} | ${s.arrays ? f(s.items / s.arrays) : ""} |`,
  );
  return [
    `${f(p.totalMs)} ms in SessionManager calls, of ${f(p.wallMs)} ms from our module's load to exit.`,
    "",
    "| method | calls | nested | total ms | first ms | later ms each | in callbacks ms | result length |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : NaN;
};

const samples = {};
const record = (key, impl, v) => {
  samples[key] ??= Object.fromEntries(IMPLS.map((i) => [i, []]));
  samples[key][impl].push(v);
};

const load0 = os.loadavg();
const t0 = Date.now();
if (!PROFILE_ONLY) {
  const active = FLOWS.filter((f) => !f.startsWith("resume") || RESUME);
  log("warm-up (compile caches, page cache)…");
  for (const flow of active) for (const impl of implsOf(flow)) await flows[flow](impl);
  for (let round = 0; round < ROUNDS; round++) {
    // rotate the order, so no implementation always runs first or last
    const order = IMPLS.map((_, k) => IMPLS[(k + round) % IMPLS.length]);
    for (const flow of active) {
      for (const impl of order.filter((i) => implsOf(flow).includes(i))) {
        const r = await flows[flow](impl);
        record(`${flow}.ms`, impl, r.ms);
        if (r.rssMB) record(`${flow}.rss`, impl, r.rssMB);
        if (r.cpuS !== null && r.cpuS !== undefined) record(`${flow}.cpu`, impl, r.cpuS * 1000);
      }
    }
    log(
      `round ${round + 1}/${ROUNDS}: ${Object.entries(samples)
        .map(([k, v]) => `${k} ${IMPLS.map((i) => v[i].at(-1)?.toFixed(0) ?? "-").join("/")}`)
        .join(", ")}`,
    );
  }
}
log("call profile of pi-native (PI_SESSION_NATIVE_TRACE)…");
const prof = IMPLS.includes("native") && !argv.includes("--no-profile") ? await profile() : {};
await model.stop();
for (const s of Object.values(sides)) rmSync(s.root, { recursive: true, force: true });

// ---------------------------------------------------------------------------
// Report

const LABEL = {
  "startup.ms": "startup, `pi -p hi` in an empty project",
  "startup.rss": "peak RSS of that",
  "startup.cpu": "CPU time (user + system) of that",
  "printTurn.ms": `print turn on ${printName} (\`--session L.jsonl -p\`)`,
  "printTurn.rss": "peak RSS of that turn",
  "printTurn.cpu": "CPU time (user + system) of that turn",
  "rpcTurns.ms": `a long-lived pi: \`--mode rpc --session\` on ${printName}, 3 prompts`,
  "rpcTurns.rss": "peak RSS of that process",
  "rpcTurns.cpu": "CPU time (user + system) of that process",
  "resume.ms": `\`pi -r\` picker (tmux), ${COUNT} sessions, until all are loaded`,
  "resumeIn.ms": `in-session \`/resume\` (tmux), ${COUNT} sessions, from Enter until all are loaded`,
};
const NAMES = { stock: "stock pi", native: "pi-native", package: "stock pi + the pi package" };
const unit = (k, v) =>
  !Number.isFinite(v)
    ? "–"
    : k.endsWith(".rss")
      ? `${v.toFixed(0)} MB`
      : v >= 1000
        ? `${(v / 1000).toFixed(2)} s`
        : `${v.toFixed(0)} ms`;
const lines = [];
lines.push("# bench:pi results", "");
lines.push(
  `pi 1.6.0 through each channel: stock \`pi\` (its bundle \`dist/bundle/cli.js\`), \`pi-native\` (the same bundle after every static of its SessionManager class is swapped for ours, pi/swap.js) and stock \`pi\` with this package installed as a pi package (\`pi install\`; its extension swaps every static once pi is up, its default). rolldown ${rolldown ? "is installed here, but pi-native no longer uses it" : "is not installed"}. ${execFileSync(N22, ["--version"]).toString().trim()}, ${os.cpus().length} × ${os.cpus()[0]?.model?.trim()}, ${new Date().toISOString()}; load average ${load0.map((x) => x.toFixed(1)).join(" ")} at start, ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(
      " ",
    )} at end; ${((Date.now() - t0) / 1000).toFixed(0)} s. Each sample a fresh process; ${ROUNDS} interleaved rounds after a warm-up; medians (min–max); ratio = stock / that channel (–: a flow the channel does not reach, pi handles \`-r\` before extensions load).`,
  "",
);
if (!PROFILE_ONLY) {
  const others = IMPLS.filter((i) => i !== "stock");
  lines.push(
    `| flow | ${IMPLS.map((i) => NAMES[i]).join(" | ")} | ${others.map((i) => `ratio ${NAMES[i]}`).join(" | ")} |`,
    `|---|${IMPLS.map(() => "---:").join("|")}|${others.map(() => "---:").join("|")}|`,
  );
  for (const [k, v] of Object.entries(samples)) {
    const cell = (i) => {
      const xs = v[i] ?? [];
      return xs.length ? `${unit(k, median(xs))} (${unit(k, Math.min(...xs))}–${unit(k, Math.max(...xs))})` : "–";
    };
    const ratio = (i) => {
      const a = median(v.stock ?? []);
      const b = median(v[i] ?? []);
      if (!Number.isFinite(a) || !Number.isFinite(b)) return "–";
      const diff = k.endsWith(".rss")
        ? `${b - a >= 0 ? "+" : ""}${(b - a).toFixed(0)} MB`
        : `${b - a >= 0 ? "+" : ""}${((b - a) / 1000).toFixed(2)} s`;
      return `**${(a / b).toFixed(2)}×** (${diff})`;
    };
    lines.push(`| ${LABEL[k] ?? k} | ${IMPLS.map(cell).join(" | ")} | ${others.map(ratio).join(" | ")} |`);
  }
  lines.push("");
}
lines.push("## What pi calls on pi-native", "");
lines.push(
  "`PI_SESSION_NATIVE_TRACE=<file>`: every SessionManager method and free function, timed in place (pi's unbundled CLI through the resolve hook of `pi-session-native/register`, where our free functions serve pi too). *calls*: outermost calls; *nested*: calls made from inside another traced call; *first ms*: the first call; *in callbacks ms*: time inside callbacks pi passed in (list's onProgress: pi's picker), included in the total.",
  "",
);
if (prof.printTurn) lines.push(`### Print turn on ${printName}`, "", profileTable(prof.printTurn));
if (prof.resume) lines.push(`### \`/resume\` over ${COUNT} sessions`, "", profileTable(prof.resume));
const text = `${lines.join("\n")}\n`;
// only a full run over the 1,000-session folder replaces the committed results
if (IMPLS.length === 3 && FLOWS.length === 4 && RESUME && !PROFILE_ONLY && SESSIONS === 1000 && !PRINT_SESSION)
  writeFileSync(join(REPO, "bench/pi-results.md"), text);
process.stdout.write(text);
