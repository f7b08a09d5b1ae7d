#!/usr/bin/env node
// bench:scale: how both implementations grow with the data, from 100 to 20,000 sessions and from
// 10 MB to 4 GB per session (issue 21). Every measurement is one fresh Node process
// (scale-child.mjs) per implementation, operation and size, at Node's default heap.
//
//   npm run bench:scale                      full ladder (~1 h on 2 cores with generation); bench/scale-results.md + scale-chart.svg
//   npm run bench:scale -- --rung small      ~2 min: 100 and 500 sessions, 10 MB sessions; checks agreement (exit 1)
//   npm run bench:scale -- --rung medium     100–5,000 sessions, 10 MB–1 GB sessions, no pi flows
//   options: --rounds N (3) --timeout S (120) --only folders,sessions,pi --sizes 100,5000,10MB,1GB,40p
//            --ops findById,open (operation keys) --merge (keep the other rows of earlier runs) --seed N
//
// Rounds interleave the implementations (reference, ours, ours, reference, …); medians and min–max;
// ratio = reference / ours for time (> 1: ours is faster), ours / reference for peak RSS (< 1: ours uses less).
// A reference that fails (killed, heap limit, RangeError, timeout) is reported as its error, and is not run
// at the larger sizes of that operation. The listing results and the open results of both must agree.
// Data is generated once (seeded) under .bench-data/scale-v1/; written files go to a temp dir.
import { spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { compareSigs } from "./agree.mjs";
import { canDropCaches } from "./fresh.mjs";
import {
  BENCH_CWD,
  generateAgentDir,
  generateFolder,
  generateSession,
  hashSeed,
  IMAGE_SESSION_SHAPE,
} from "../support/gen.mjs";
import { describeOurs, oursBuildId, snapshotOurs } from "./impls.mjs";
import { esc, fmt, machineInfo } from "./report.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..");
const CHILD = join(HERE, "scale-child.mjs");
const KB = 1024;
const MB = 1024 * KB;
const GB = 1024 * MB;

// ---------------------------------------------------------------------------
// Options

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i < 0 ? dflt : argv[i + 1];
};
const RUNG = opt("--rung", "full");
if (!["small", "medium", "full"].includes(RUNG)) throw new Error(`--rung small|medium|full, not ${RUNG}`);
const SMALL = RUNG === "small";
const ROUNDS = Number(opt("--rounds", 3));
const TIMEOUT_S = Number(opt("--timeout", 120));
const SEED = Number(opt("--seed", 42));
const ONLY = opt("--only", "folders,sessions,pi").split(",");
const SIZES_PICK = opt("--sizes", null)?.split(",");
const MERGE = argv.includes("--merge");
const OPS_PICK = opt("--ops", null)?.split(",");

const LADDER = {
  small: { folders: [100, 500], agents: [40], sessions: [10 * MB], pi: false },
  medium: { folders: [100, 1000, 5000], agents: [40, 400], sessions: [10 * MB, 100 * MB, GB], pi: false },
  full: { folders: [100, 1000, 5000, 20000], agents: [40, 400], sessions: [10 * MB, 100 * MB, GB, 4 * GB], pi: true },
}[RUNG];
const sizeName = (b) => (b >= GB ? `${b / GB}GB` : `${b / MB}MB`);
const picked = (name) => !SIZES_PICK || SIZES_PICK.includes(String(name));
const FOLDERS = ONLY.includes("folders") ? LADDER.folders.filter(picked) : [];
const AGENTS = ONLY.includes("folders") ? LADDER.agents.filter((p) => picked(`${p}p`)) : [];
const SESSIONS = ONLY.includes("sessions") ? LADDER.sessions.filter((b) => picked(sizeName(b))) : [];
const PI = ONLY.includes("pi") && (LADDER.pi || argv.includes("--only"));

/** Per-session size of the folders (log-normal around it): 20,000 sessions ≈ 3.9 GB. */
const FOLDER_AVG = 200 * KB;
/** listAll: 10 sessions per project. */
const PER_PROJECT = 10;
const KINDS = opt("--kinds", "text,image,image-compacted").split(",");
const IMAGE_OPTS = {
  imageChance: 1,
  imageBytes: [1.5 * MB, 0.75 * MB, 4.5 * MB], // raw; the base64 is 1–6 MB, 2 MB typical
  compactionEvery: [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

const DATA = join(REPO, ".bench-data", "scale-v1", `seed${SEED}`);
mkdirSync(DATA, { recursive: true });
const TMP = mkdtempSync(join(os.tmpdir(), "pi-bench-scale-"));
const AGENT_EMPTY = join(TMP, "agent");
mkdirSync(AGENT_EMPTY, { recursive: true });
const log = (s) => process.stderr.write(`${s}\n`);
process.on("exit", () => rmSync(TMP, { recursive: true, force: true }));
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

const T0 = Date.now();
const machine = machineInfo();
snapshotOurs(join(TMP, "ours"));
const CLI_BIN = join(REPO, "target", "release", "pi-sessions");
const DROP = !SMALL && canDropCaches();

// ---------------------------------------------------------------------------
// Data (cached by seed and size; a .json manifest marks a finished set)

function readJson(p) {
  try {
    return JSON.parse(readFileSync(p, "utf8"));
  } catch {
    return null;
  }
}

function cached(name, make) {
  const mark = join(DATA, `${name}.json`);
  const have = readJson(mark);
  if (have) return have;
  const t = Date.now();
  log(`generating ${name}…`);
  const m = make(join(DATA, name));
  writeFileSync(mark, JSON.stringify(m));
  log(`  ${name}: ${(m.bytes / MB).toFixed(0)} MB (${((Date.now() - t) / 1000).toFixed(0)} s)`);
  return m;
}

function folderData(n) {
  return cached(`folder-${n}`, (dir) => {
    rmSync(dir, { recursive: true, force: true });
    const f = generateFolder(dir, {
      seed: hashSeed(SEED, "scale-folder", n),
      count: n,
      totalBytes: n * FOLDER_AVG,
      cwd: BENCH_CWD,
    });
    const newest = f.sessions.reduce((a, s) => (s.endMs > a.endMs ? s : a));
    return {
      dir,
      cwd: f.cwd,
      count: f.sessions.length,
      bytes: f.sessions.reduce((s, x) => s + x.bytes, 0),
      midId: f.sessions[f.sessions.length >> 1].id,
      newest: newest.file,
    };
  });
}

function agentData(p) {
  return cached(`agent-${p}`, (dir) => {
    rmSync(dir, { recursive: true, force: true });
    const a = generateAgentDir(dir, {
      seed: hashSeed(SEED, "scale-agent", p),
      projects: p,
      sessions: p * PER_PROJECT,
      totalBytes: p * PER_PROJECT * FOLDER_AVG,
    });
    const all = a.projects.flatMap((f) => f.sessions);
    return { root: dir, count: all.length, projects: p, bytes: all.reduce((s, x) => s + x.bytes, 0) };
  });
}

/** The id of the first message entry that starts after the middle byte of the file. */
function midEntryId(file, bytes) {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(8 * MB);
    // not `bytes >> 1`: a 4 GB file's length is past 32 bits
    for (let pos = Math.floor(bytes / 2); pos < bytes; pos += buf.length - 512) {
      const got = readSync(fd, buf, 0, buf.length, pos);
      const text = buf.toString("latin1", 0, got);
      const m = /\n\{"type":"message","id":"([^"]+)"/.exec(text);
      if (m) return m[1];
    }
  } finally {
    closeSync(fd);
  }
  throw new Error(`no entry after the middle of ${file}`);
}

function sessionData(kind, bytes) {
  return cached(`${kind}-${sizeName(bytes)}`, (dir) => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "session.jsonl");
    const meta = generateSession(`${file}.tmp`, {
      seed: hashSeed(SEED, `scale-${kind}`, bytes),
      targetBytes: bytes,
      cwd: BENCH_CWD,
      startMs: Date.UTC(2026, 0, 5, 9),
      ...(kind === "image" ? IMAGE_OPTS : kind === "image-compacted" ? IMAGE_SESSION_SHAPE : {}),
    });
    renameSync(`${file}.tmp`, file);
    const st = statSync(file);
    return {
      kind,
      dir,
      file,
      cwd: BENCH_CWD,
      bytes: st.size,
      mtimeMs: st.mtimeMs,
      entries: meta.entries,
      midId: midEntryId(file, st.size),
    };
  });
}

/** Put a session file back as generated (after appends, or a run killed in the middle of them). */
function restoreFile(file, bytes, mtimeMs) {
  if (statSync(file).size !== bytes) truncateSync(file, bytes);
  utimesSync(file, new Date(mtimeMs), new Date(mtimeMs));
}

// ---------------------------------------------------------------------------
// Running one measurement

function shortError(r, stderr) {
  if (r.error?.code === "ETIMEDOUT" || (r.signal === "SIGKILL" && r.timedOut)) return `>${TIMEOUT_S} s`;
  if (/Reached heap limit|JavaScript heap out of memory/.test(stderr)) return "OOM (heap limit)";
  const m =
    /(RangeError[^\n]*)/.exec(stderr) ??
    /(Error \[ERR_[A-Z_]+\][^\n]*)/.exec(stderr) ??
    /^(\w*Error: [^\n]*)/m.exec(stderr);
  if (m) return m[1].slice(0, 90);
  if (r.signal) return `killed by ${r.signal}`;
  return `exit ${r.status}: ${stderr.trim().split("\n").pop()?.slice(0, 80) ?? ""}`;
}

function baseEnv(extra = {}) {
  return { ...process.env, PI_CODING_AGENT_DIR: AGENT_EMPTY, ...extra };
}

/** One child: { ms, peakKiB, rchar, readBytes, sig } or { error }. */
function runChild(impl, params, env) {
  const out = join(TMP, "out");
  mkdirSync(out, { recursive: true });
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [CHILD], {
    encoding: "utf8",
    env: baseEnv({ ...env, BENCH_SCALE_ARGS: JSON.stringify({ impl, tmp: out, ...params }) }),
    timeout: TIMEOUT_S * 1000,
    killSignal: "SIGKILL",
    maxBuffer: 256 * MB,
  });
  r.timedOut = r.signal === "SIGKILL" && Date.now() - t0 >= TIMEOUT_S * 1000 - 50;
  rmSync(out, { recursive: true, force: true });
  if (r.status === 0) {
    try {
      return JSON.parse(r.stdout.trim().split("\n").pop());
    } catch {}
  }
  return { error: shortError(r, r.stderr ?? "") };
}

/** The CLI (ours only): the whole process, wall time and peak RSS from /usr/bin/time. */
function runCli(args, env) {
  const time = existsSync("/usr/bin/time");
  const cmd = time ? "/usr/bin/time" : CLI_BIN;
  const a = time ? ["-f", "%M", CLI_BIN, ...args] : args;
  const t0 = performance.now();
  const r = spawnSync(cmd, a, {
    encoding: "utf8",
    env: baseEnv(env),
    stdio: ["ignore", "ignore", "pipe"],
    timeout: TIMEOUT_S * 1000,
    killSignal: "SIGKILL",
  });
  const ms = performance.now() - t0;
  const lines = (r.stderr ?? "").trimEnd().split("\n");
  const peakKiB = time ? Number(lines.at(-1)) : Number.NaN;
  // search exits 1 when nothing matched, check when it found problems: both are results
  if (r.status !== 0 && r.status !== 1) return { error: shortError(r, r.stderr ?? "") };
  return { ms, peakKiB, exit: r.status };
}

// ---------------------------------------------------------------------------
// Cases: one (group, operation, size); each runs ROUNDS interleaved rounds

const rows = [];
const mismatches = [];
const refFailedAt = new Map(); // op key -> size label where the reference first failed

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : Number.NaN;
};

function dropCaches() {
  spawnSync("sync");
  writeFileSync("/proc/sys/vm/drop_caches", "3");
}

/**
 * c: { group, op, label, size, sizeLabel, params, env, impls?, before?(impl), after?(impl), cli? }
 */
function runCase(c) {
  const impls = c.impls ?? ["reference", "ours"];
  const samples = Object.fromEntries(impls.map((i) => [i, []]));
  const errors = {};
  const sigs = {};
  const opKey = `${c.group}/${c.op}`;
  if (impls.includes("reference") && refFailedAt.has(opKey))
    errors.reference = `not run (failed at ${refFailedAt.get(opKey)})`;
  const t = Date.now();
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...impls].reverse() : impls;
    for (const impl of order) {
      if (errors[impl]) continue;
      c.before?.(impl);
      const got = c.cli ? runCli(c.cli, c.env) : runChild(impl, c.params, c.env);
      c.after?.(impl);
      if (got.error) {
        errors[impl] = got.error;
        if (impl === "reference") refFailedAt.set(opKey, c.sizeLabel);
        continue;
      }
      samples[impl].push(got);
      sigs[impl] ??= got.sig;
    }
  }
  if (sigs.reference && sigs.ours) {
    const d = compareSigs(sigs.reference, sigs.ours);
    if (d.length) {
      mismatches.push({ label: `${c.label} @ ${c.sizeLabel}`, diffs: d });
      log(`  ✗ MISMATCH ${c.label} @ ${c.sizeLabel}:\n    ${d.slice(0, 5).join("\n    ")}`);
    }
  }
  const stat = (impl, k) => samples[impl]?.map((s) => s[k]) ?? [];
  const row = {
    group: c.group,
    op: c.op,
    label: c.label,
    size: c.size,
    sizeLabel: c.sizeLabel,
    bytes: c.bytes,
    agreed: sigs.reference && sigs.ours ? !mismatches.some((m) => m.label === `${c.label} @ ${c.sizeLabel}`) : null,
    build: oursBuildId(),
    date: new Date().toISOString(),
  };
  for (const impl of ["reference", "ours"]) {
    const ms = stat(impl, "ms");
    row[impl] = errors[impl]
      ? { error: errors[impl] }
      : ms.length
        ? {
            ms: median(ms),
            min: Math.min(...ms),
            max: Math.max(...ms),
            n: ms.length,
            peakKiB: median(stat(impl, "peakKiB")),
            rchar: median(stat(impl, "rchar")),
            readBytes: median(stat(impl, "readBytes")),
          }
        : null;
  }
  rows.push(row);
  const show = (impl) => {
    const x = row[impl];
    if (!x) return "–";
    if (x.error) return x.error;
    return `${fmt(x.ms)} ${(x.peakKiB / 1024).toFixed(0)} MB`;
  };
  const ratio = row.reference?.ms && row.ours?.ms ? ` ${(row.reference.ms / row.ours.ms).toFixed(2)}×` : "";
  log(
    `  ${c.label.padEnd(34)} ${c.sizeLabel.padStart(8)}  ref ${show("reference").padEnd(22)} ours ${show("ours").padEnd(18)}${ratio}  (${((Date.now() - t) / 1000).toFixed(0)} s)`,
  );
  return row;
}

// ---------------------------------------------------------------------------
// The ladder

/** Append one message line to a session (the "one file changed" listing); undone after the sample. */
function changeOne(file) {
  const line = JSON.stringify({
    type: "message",
    id: "5ca1e001",
    parentId: null,
    timestamp: "2026-12-01T12:00:00.000Z",
    message: { role: "user", content: [{ type: "text", text: "one more line" }], timestamp: Date.UTC(2026, 11, 1, 12) },
  });
  const st = statSync(file);
  const fd = openSync(file, "a");
  writeSync(fd, `${line}\n`);
  closeSync(fd);
  return () => restoreFile(file, st.size, st.mtimeMs);
}

function folderCases(n) {
  const F = folderData(n);
  const indexDir = join(TMP, `index-folder-${n}`);
  const env = { PI_SESSION_NATIVE_INDEX_DIR: indexDir };
  const base = { group: "folders", size: n, sizeLabel: n.toLocaleString("en-US"), bytes: F.bytes, env };
  const list = { op: "list", cwd: F.cwd, dir: F.dir };
  let undo = null;
  const cases = [
    {
      ...base,
      op: "list-first",
      label: "list(), first run (no index)",
      params: list,
      before: (impl) => impl === "ours" && rmSync(indexDir, { recursive: true, force: true }),
    },
    { ...base, op: "list-warm", label: "list(), warm index", params: list },
    ...(DROP
      ? [{ ...base, op: "list-cold", label: "list(), warm index, cache dropped", params: list, before: dropCaches }]
      : []),
    {
      ...base,
      op: "list-changed",
      label: "list(), one file changed",
      params: list,
      before: () => (undo = changeOne(F.newest)),
      after: () => undo?.(),
    },
    {
      ...base,
      op: "continueRecent",
      label: "continueRecent(cwd, dir)",
      params: { op: "continueRecent", cwd: F.cwd, dir: F.dir },
    },
    {
      ...base,
      op: "findById",
      label: "findById(cwd, id, dir)",
      params: { op: "findById", cwd: F.cwd, id: F.midId, dir: F.dir },
    },
  ];
  return { cases, meta: `${n.toLocaleString("en-US")} sessions, ${(F.bytes / MB).toFixed(0)} MB` };
}

function agentCases(p) {
  const A = agentData(p);
  const indexDir = join(TMP, `index-agent-${p}`);
  const env = { PI_SESSION_NATIVE_INDEX_DIR: indexDir, PI_CODING_AGENT_DIR: A.root };
  const base = { group: "agents", size: p, sizeLabel: `${p} projects`, bytes: A.bytes, env, params: { op: "listAll" } };
  return {
    cases: [
      {
        ...base,
        op: "listAll-first",
        label: "listAll(), first run (no index)",
        before: (impl) => impl === "ours" && rmSync(indexDir, { recursive: true, force: true }),
      },
      { ...base, op: "listAll-warm", label: "listAll(), warm index" },
    ],
    meta: `${p} projects, ${A.count.toLocaleString("en-US")} sessions, ${(A.bytes / MB).toFixed(0)} MB`,
  };
}

function sessionCases(kind, bytes) {
  const S = sessionData(kind, bytes);
  restoreFile(S.file, S.bytes, S.mtimeMs);
  const env = { PI_SESSION_NATIVE_INDEX_DIR: join(TMP, "index-sessions") };
  const group = `${kind} sessions`;
  const base = { group, size: S.bytes, sizeLabel: sizeName(bytes), bytes: S.bytes, env };
  const p = { file: S.file, cwd: S.cwd, midId: S.midId };
  const restore = () => restoreFile(S.file, S.bytes, S.mtimeMs);
  const cli = (args) => ({ impls: ["ours"], cli: args });
  return {
    cases: [
      { ...base, op: "open", label: "open(file)", params: { ...p, op: "open" } },
      { ...base, op: "context", label: "open + buildSessionContext()", params: { ...p, op: "context" } },
      { ...base, op: "branch", label: "first getBranch() after open", params: { ...p, op: "branch" } },
      {
        ...base,
        op: "materialise",
        label: "open + getBranch() + getEntries()",
        params: { ...p, op: "materialise" },
      },
      {
        ...base,
        op: "append",
        label: "1,000 appendMessage after open",
        params: { ...p, op: "append" },
        after: restore,
      },
      { ...base, op: "fork", label: "forkFrom(file, cwd, dir)", params: { ...p, op: "fork" } },
      {
        ...base,
        op: "branched",
        label: "createBranchedSession(mid entry)",
        params: { ...p, op: "branched" },
      },
      { ...base, op: "cli-search", label: "pi-sessions search Größe", ...cli(["search", "Größe", "--dir", S.dir]) },
      { ...base, op: "cli-show", label: "pi-sessions show", ...cli(["show", S.file]) },
      { ...base, op: "cli-check", label: "pi-sessions check", ...cli(["check", S.file]) },
    ],
    meta: `${kind} ${sizeName(bytes)}: ${(S.bytes / MB).toFixed(0)} MB, ${S.entries.toLocaleString("en-US")} entries`,
  };
}

log(
  `bench:scale, rung ${RUNG}; ${ROUNDS} rounds; timeout ${TIMEOUT_S} s; ${machine.cpu}; Node ${machine.node}; ours: ${oursBuildId()}${DROP ? "" : SMALL ? "; no page-cache drops in the small rung" : "; page cache cannot be dropped (not root): no cold row"}`,
);
if (!existsSync(CLI_BIN) && SESSIONS.length) {
  log("building pi-sessions (cargo build --release -p pi-sessions)…");
  spawnSync("cargo", ["build", "--release", "-p", "pi-sessions"], { cwd: REPO, stdio: "inherit" });
}
const datasets = [];
for (const n of FOLDERS) {
  const { cases, meta } = folderCases(n);
  datasets.push(meta);
  log(`folder: ${meta}`);
  for (const c of cases) if (!OPS_PICK || OPS_PICK.includes(c.op)) runCase(c);
}
for (const p of AGENTS) {
  const { cases, meta } = agentCases(p);
  datasets.push(meta);
  log(`agent dir: ${meta}`);
  for (const c of cases) if (!OPS_PICK || OPS_PICK.includes(c.op)) runCase(c);
}
for (const kind of KINDS) {
  // The compacted image shape from 100 MB up (smaller ones hold a few images).
  for (const b of SESSIONS.filter((b) => kind !== "image-compacted" || b >= 100 * MB)) {
    const { cases, meta } = sessionCases(kind, b);
    datasets.push(meta);
    log(`session: ${meta}`);
    for (const c of cases) if (!OPS_PICK || OPS_PICK.includes(c.op)) runCase(c);
  }
}

// ---------------------------------------------------------------------------
// pi's own flows (bench/pi.mjs): /resume over 5,000 sessions, a print turn on the 1 GB session

let piText = null;
if (PI) {
  const text1g = sessionData("text", GB);
  const image1g = sessionData("image-compacted", GB);
  const runs = [
    ["--flows", "resume", "--sessions", "5000"],
    ["--flows", "printTurn", "--print-session", text1g.file],
    ["--flows", "printTurn", "--print-session", image1g.file],
  ];
  piText = [];
  for (const a of runs) {
    log(`bench/pi.mjs ${a.join(" ")} --rounds ${ROUNDS}…`);
    const r = spawnSync(process.execPath, [join(HERE, "pi.mjs"), ...a, "--rounds", String(ROUNDS), "--no-profile"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 64 * MB,
    });
    const table = (r.stdout ?? "").split("\n").filter((l) => l.startsWith("|"));
    piText.push({ args: a.join(" "), ok: r.status === 0, table, err: r.status === 0 ? "" : `exit ${r.status}` });
  }
}
// pi's tables are kept beside the rows, so that a --merge run without pi keeps them too
const PI_FILE = join(DATA, "pi-ladder.json");
if (piText && !SMALL) writeFileSync(PI_FILE, JSON.stringify({ date: new Date().toISOString(), piText }));
else if (MERGE) piText = readJson(PI_FILE)?.piText ?? null;

// ---------------------------------------------------------------------------
// Report

/** Least-squares slope of log(time) over log(size). */
function slope(points) {
  const p = points.filter(([x, y]) => x > 0 && y > 0);
  if (p.length < 2) return null;
  const X = p.map(([x]) => Math.log(x));
  const Y = p.map(([, y]) => Math.log(y));
  const mx = X.reduce((a, b) => a + b, 0) / X.length;
  const my = Y.reduce((a, b) => a + b, 0) / Y.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < X.length; i++) {
    num += (X[i] - mx) * (Y[i] - my);
    den += (X[i] - mx) ** 2;
  }
  return den ? num / den : null;
}

const ROWS_FILE = join(DATA, `rows-${SMALL ? "small" : "ladder"}.json`);
let allRows = rows;
if (MERGE && !SMALL) {
  const old = readJson(ROWS_FILE) ?? [];
  const key = (r) => `${r.group}|${r.op}|${r.size}`;
  const now = new Set(rows.map(key));
  allRows = [...old.filter((r) => !now.has(key(r))), ...rows];
}
writeFileSync(ROWS_FILE, JSON.stringify(allRows));
// The data sets' descriptions too (a seed describes a set the same way in every run), in the order first seen.
const SETS_FILE = join(DATA, `datasets-${SMALL ? "small" : "ladder"}.json`);
const allSets = MERGE && !SMALL ? [...new Set([...(readJson(SETS_FILE) ?? []), ...datasets])] : datasets;
writeFileSync(SETS_FILE, JSON.stringify(allSets));

const GROUPS = ["folders", "agents", "text sessions", "image sessions", "image-compacted sessions"];
const byOp = new Map();
for (const r of allRows) {
  const k = `${r.group}|${r.op}`;
  if (!byOp.has(k)) byOp.set(k, []);
  byOp.get(k).push(r);
}
for (const list of byOp.values()) list.sort((a, b) => a.size - b.size);
const opsOf = (g) => [...byOp.entries()].filter(([k]) => k.startsWith(`${g}|`)).map(([, v]) => v);

const mbOf = (kib) => (kib == null || Number.isNaN(kib) ? "–" : `${(kib / 1024).toFixed(0)} MB`);
const cell = (x) =>
  !x ? "–" : x.error ? `**${x.error}**` : `${fmt(x.ms)} (${fmt(x.min)}–${fmt(x.max)})`.replace(/ ms\)/, " ms)");
const rx = (a, b, digits = 2) => (a && b ? `${(a / b).toFixed(a / b >= 10 ? 1 : digits)}×` : "–");
const expo = (list, impl) => {
  const k = slope(list.filter((r) => r[impl]?.ms).map((r) => [r.size, r[impl].ms]));
  return k == null ? "–" : k.toFixed(2);
};
const mbBytes = (b) => (b >= GB ? `${(b / GB).toFixed(2)} GB` : `${(b / MB).toFixed(0)} MB`);

const L = [];
L.push(`# bench:scale results${SMALL ? " (small rung)" : ""}`, "");
L.push(
  `Reference: \`@earendil-works/pi-coding-agent@1.6.0\` \`SessionManager\`. Ours: ${describeOurs()}, ${oursBuildId()}. ${machine.cpu}, ${machine.memory}, ${machine.os}, Node ${machine.node} at its default heap; commit ${machine.commit}; ${machine.date}; load average ${machine.loadavg} at start, ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(
      " ",
    )} at end; this run ${((Date.now() - T0) / 60000).toFixed(1)} min${MERGE ? ` (rows of earlier runs merged: each row's date and build are in \`.bench-data/scale-v1/seed${SEED}/rows-ladder.json\`)` : ""}.`,
  "",
);
L.push(
  `Each sample is one fresh Node process per implementation, operation and size (\`bench/scale-child.mjs\`); time = the operation alone (module load and untimed set-up excluded), peak RSS = \`VmHWM\` of that process. ${ROUNDS} interleaved rounds (reference, ours, ours, reference, …); median (min–max). Ratio = reference / ours for time (**> 1: ours is faster**), ours / reference for RSS (< 1: ours uses less). *k* = growth exponent, the least-squares slope of log(time) over log(size) across the rungs (size = sessions, projects or bytes); 1 = linear. Child timeout ${TIMEOUT_S} s; a reference that fails is shown as its error and not run at larger sizes of that operation.`,
  "",
);
L.push(
  `Data (seeded, \`support/gen.mjs\`, cached in \`.bench-data/scale-v1/\`): ${allSets.join("; ")}. Folders: log-normal sizes around ${FOLDER_AVG / KB} KB a session; agent dirs: ${PER_PROJECT} sessions a project. Image sessions: every user prompt carries a 1–6 MB base64 image, no compaction (the whole file is context). Image-compacted sessions: the shape users report (\`IMAGE_SESSION_SHAPE\`): a ~3 MB screenshot a prompt and a compaction every ~40 prompts, so the context holds a handful of the file's images. Written files go to a temp dir.`,
  "",
);
if (!DROP && !SMALL) L.push("The page cache could not be dropped (not root): no cold-cache rows.", "");

for (const g of GROUPS) {
  const ops = opsOf(g);
  if (!ops.length) continue;
  const isList = g === "folders" || g === "agents";
  L.push(`## ${g}`, "");
  L.push(
    `| operation | size | reference | ours | ratio | ref peak RSS | ours peak RSS | RSS ratio |${isList ? " ours read (rchar / from storage) |" : ""}`,
  );
  L.push(`|---|---:|---:|---:|---:|---:|---:|---:|${isList ? "---:|" : ""}`);
  for (const list of ops) {
    for (const r of list) {
      const a = r.reference;
      const b = r.ours;
      const sz = g.endsWith("sessions")
        ? `${r.sizeLabel} (${mbBytes(r.bytes)})`
        : `${r.sizeLabel} (${mbBytes(r.bytes)})`;
      const io =
        isList && b?.rchar != null ? ` ${mbOf(b.rchar / 1024)} / ${mbOf(b.readBytes / 1024)} |` : isList ? " – |" : "";
      L.push(
        `| ${r.label} | ${sz} | ${cell(a)} | ${cell(b)} | **${rx(a?.ms, b?.ms)}** | ${a?.error ? "–" : mbOf(a?.peakKiB)} | ${mbOf(b?.peakKiB)} | ${rx(b?.peakKiB, a?.error ? null : a?.peakKiB)} |${io}`,
      );
    }
  }
  L.push("", "Growth exponents *k* (time):", "");
  L.push("| operation | reference | ours |", "|---|---:|---:|");
  for (const list of ops) {
    const ko = expo(list, "ours");
    L.push(`| ${list[0].label} | ${expo(list, "reference")} | ${ko}${Number(ko) > 1.1 ? " ⚠️" : ""} |`);
  }
  L.push("");
}

const fails = allRows.flatMap((r) =>
  ["reference", "ours"]
    .filter((i) => r[i]?.error)
    .map((i) => `- ${i}: ${r.group}, ${r.label} @ ${r.sizeLabel}: ${r[i].error}`),
);
L.push("## Failures", "", ...(fails.length ? fails : ["none"]), "");
L.push(
  "## Agreement",
  "",
  mismatches.length
    ? mismatches.map((m) => `- ✗ ${m.label}: ${m.diffs.slice(0, 3).join("; ")}`).join("\n")
    : `Every operation both implementations completed gave the same result: listings (path, id, messageCount, firstMessage, name, modified, sorted by path), open (entries, leaf id), context (message count, hash of every message), branch, appends, fork and branched session (entry counts, lines written). ${allRows.filter((r) => r.agreed).length} (operation, size) pairs compared.`,
  "",
);
if (piText) {
  L.push("## pi's own flows (`bench/pi.mjs`)", "");
  for (const p of piText) {
    L.push(`\`node bench/pi.mjs ${p.args} --rounds ${ROUNDS} --no-profile\`${p.ok ? "" : ` — failed (${p.err})`}`, "");
    L.push(...p.table, "");
  }
}

// Chart: log-log, time and peak RSS against size, one panel per group.
function chart() {
  const panels = [];
  for (const g of GROUPS) {
    const ops = opsOf(g).filter((l) => !l[0].op.startsWith("cli-") || true);
    if (!ops.length) continue;
    panels.push({ g, what: "time", ops, val: (x) => x?.ms, unit: "ms" });
    panels.push({ g, what: "peak RSS", ops, val: (x) => (x?.peakKiB ? x.peakKiB / 1024 : undefined), unit: "MB" });
  }
  const PW = 520;
  const PH = 300;
  const W = PW * 2 + 40;
  const H = 60 + Math.ceil(panels.length / 2) * (PH + 150);
  const colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="16" y="22" font-size="15" font-weight="600">bench:scale — time and peak RSS against size (log-log)</text>`,
    `<text x="16" y="40" fill="#555">${esc(`solid = ours, dashed = reference; ✕ = reference failed there. ${machine.cpu}, Node ${machine.node}, ${machine.date.slice(0, 10)}`)}</text>`,
  ];
  panels.forEach((P, i) => {
    const ox = 20 + (i % 2) * (PW + 10);
    const oy = 60 + Math.floor(i / 2) * (PH + 150);
    const l = ox + 60;
    const rgt = ox + PW - 10;
    const top = oy + 24;
    const bot = oy + PH - 30;
    const pts = P.ops.flatMap((list) =>
      list.flatMap((r) => ["reference", "ours"].map((im) => [r.size, P.val(r[im])]).filter(([, y]) => y > 0)),
    );
    if (!pts.length) return;
    const xs = pts.map((p) => p[0]);
    const ys = pts.map((p) => p[1]);
    const lx0 = Math.floor(Math.log10(Math.min(...xs)) * 2) / 2;
    const lx1 = Math.ceil(Math.log10(Math.max(...xs)) * 2 + 0.001) / 2;
    const ly0 = Math.floor(Math.log10(Math.min(...ys)));
    const ly1 = Math.ceil(Math.log10(Math.max(...ys)) + 0.001);
    const X = (v) => l + ((Math.log10(v) - lx0) / (lx1 - lx0 || 1)) * (rgt - l);
    const Y = (v) => bot - ((Math.log10(v) - ly0) / (ly1 - ly0 || 1)) * (bot - top);
    out.push(`<text x="${ox}" y="${oy + 12}" font-weight="600">${esc(`${P.g}: ${P.what} (${P.unit})`)}</text>`);
    out.push(`<rect x="${l}" y="${top}" width="${rgt - l}" height="${bot - top}" fill="none" stroke="#bbb"/>`);
    for (let e = ly0; e <= ly1; e++) {
      out.push(`<line x1="${l}" y1="${Y(10 ** e)}" x2="${rgt}" y2="${Y(10 ** e)}" stroke="#eee"/>`);
      out.push(
        `<text x="${l - 4}" y="${Y(10 ** e) + 4}" text-anchor="end" fill="#555">${esc(fmtTick(10 ** e))}</text>`,
      );
    }
    const sizes = [...new Set(xs)].sort((a, b) => a - b);
    for (const s of sizes) {
      const label = P.ops[0].find((r) => r.size === s)?.sizeLabel ?? P.ops.flat().find((r) => r.size === s)?.sizeLabel;
      out.push(`<line x1="${X(s)}" y1="${top}" x2="${X(s)}" y2="${bot}" stroke="#eee"/>`);
      out.push(
        `<text x="${X(s)}" y="${bot + 14}" text-anchor="middle" fill="#555">${esc(String(label).replace(" projects", "p"))}</text>`,
      );
    }
    P.ops.forEach((list, j) => {
      const c = colors[j % colors.length];
      for (const im of ["reference", "ours"]) {
        const p = list.filter((r) => P.val(r[im]) > 0).map((r) => [X(r.size), Y(P.val(r[im]))]);
        if (p.length)
          out.push(
            `<polyline points="${p.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(" ")}" fill="none" stroke="${c}" stroke-width="1.8"${im === "reference" ? ' stroke-dasharray="5 3"' : ""}/>`,
            ...p.map(([a, b]) => `<circle cx="${a.toFixed(1)}" cy="${b.toFixed(1)}" r="2.5" fill="${c}"/>`),
          );
        for (const r of list.filter((r) => r[im]?.error && !r[im].error.startsWith("not run")))
          out.push(
            `<text x="${X(r.size)}" y="${top + 12}" text-anchor="middle" fill="${c}" font-weight="700">✕</text>`,
          );
      }
      const ly = bot + 30 + Math.floor(j / 2) * 14;
      const lxx = l + (j % 2) * 230;
      out.push(
        `<line x1="${lxx}" y1="${ly - 4}" x2="${lxx + 18}" y2="${ly - 4}" stroke="${c}" stroke-width="2"/><text x="${lxx + 22}" y="${ly}">${esc(list[0].label)}</text>`,
      );
    });
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
function fmtTick(v) {
  if (v >= 1000) return `${v / 1000}k`;
  return String(v);
}

const full = !SMALL && !SIZES_PICK && !OPS_PICK && !argv.includes("--only") ? true : MERGE;
const mdPath = full ? join(HERE, "scale-results.md") : join(DATA, `scale-results-${RUNG}.md`);
const svgPath = full ? join(HERE, "scale-chart.svg") : join(DATA, `scale-chart-${RUNG}.svg`);
writeFileSync(mdPath, `${L.join("\n")}\n`);
writeFileSync(svgPath, chart());
log(`wrote ${mdPath} and ${svgPath} (${((Date.now() - T0) / 60000).toFixed(1)} min)`);
if (mismatches.length) {
  log(`✗ ${mismatches.length} disagreement(s) between the reference and ours`);
  process.exit(1);
}
if (SMALL && rows.some((r) => r.ours?.error)) {
  log("✗ ours failed in the small rung");
  process.exit(1);
}
