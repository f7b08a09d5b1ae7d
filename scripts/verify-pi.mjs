// npm run verify:pi -- <version | pi package dir | .tgz> [--quick] [--no-cli] [--json <file>] [--write]
//                      [--table <file>] [--files open/a.test.mjs,list/b.test.mjs]
//
// Whether a pi release (or a local pi package) can join the verified table (pi/verified.json):
//   1. install it into .cache/pi/ (scripts/pi-cache.mjs);
//   2. fingerprint its session module in both forms (scripts/pi-verdict.mjs, on Node >= 22.19) and
//      look them up in the table;
//   3. the differential suites against its own session module, ours in its profile
//      (scripts/pi-versions.mjs; --quick: the quick set; --files: only these test files, relative to __test__);
//   4. unless --no-cli, pi's CLI stock vs pi-native and the pi package (npm run test:pi,
//      test:pi-package, with PI_TEST_PI=<its package dir>; --quick: test:pi-package -- --quick).
// Then `verified: pi <version>` and the row to append, or `not verified: pi <version>` and why.
// A module that no row has is information (a new session module), not a failure: the suites decide.
//
// --json <file>  writes { version, verified, row, alreadyCovered, notes, steps: [{ name, ok, detail }], report }
// --write        when verified, adds the row to the table (rows sorted by version); not when the table
//                already has a row for that version
// --table <file> the table to look up and write (default pi/verified.json; the release watch's test)
// Exits 0 when verified, 1 when not, 2 on bad usage.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { parseArgs, stripVTControlCharacters } from "node:util";
import { nodeBinary } from "./node-bin.mjs";
import { installPi, isPath, piVersion, REPO } from "./pi-cache.mjs";

const require = createRequire(import.meta.url);
const { forVersion, parseVersion } = require("../lib/profile.js");

const USAGE =
  "usage: npm run verify:pi -- <version | pi package dir | .tgz> [--quick] [--no-cli] [--json <file>] [--write] [--table <file>] [--files a,b]";

function usage(why) {
  console.error(`verify:pi: ${why}\n${USAGE}`);
  process.exit(2);
}

// ---- arguments
let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: "boolean", default: false },
      "no-cli": { type: "boolean", default: false },
      write: { type: "boolean", default: false },
      json: { type: "string" },
      table: { type: "string" },
      files: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
} catch (e) {
  usage(e.message);
}
if (parsed.values.help) {
  console.log(USAGE);
  process.exit(0);
}
const { values } = parsed;
const opts = {
  quick: values.quick,
  cli: !values["no-cli"],
  write: values.write,
  json: values.json === undefined ? null : resolve(values.json),
  table: values.table === undefined ? join(REPO, "pi", "verified.json") : resolve(values.table),
  files: values.files ?? null,
};
const specs = parsed.positionals;
if (specs.length !== 1) usage(specs.length ? "one pi at a time" : "which pi?");
const spec = specs[0];
if (!isPath(spec) && !parseVersion(spec)) usage(`${JSON.stringify(spec)} is neither a pi version nor a path`);

let table;
try {
  table = JSON.parse(readFileSync(opts.table, "utf8"));
  if (!Array.isArray(table.releases)) throw new Error("no releases array");
} catch (e) {
  usage(`cannot read the table ${opts.table}: ${e.message}`);
}

// ---- helpers
const compare = (a, b) => {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
};

/** lib/profile.js's forVersion() over `rows` (the table given). */
const profileFor = (version, rows) => forVersion(version, "the version", rows);

const short = (print) => (print ? `${print.slice(0, 12)}…` : "none");

/** Runs `cmd args`, echoing its output indented; resolves { code, out }. */
function run(cmd, args, env = {}, echo = true) {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: REPO, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let pending = "";
    const take = (chunk) => {
      const s = chunk.toString();
      out += s;
      pending += s;
      const lines = pending.split("\n");
      pending = lines.pop();
      if (echo) for (const l of lines) process.stdout.write(`  │ ${l}\n`);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", (e) => {
      out += `\n${e.message}`;
      done({ code: -1, out });
    });
    child.on("close", (code, signal) => {
      if (pending && echo) process.stdout.write(`  │ ${pending}\n`);
      done({ code: code ?? (signal ? `${signal}` : -1), out: stripVTControlCharacters(out) });
    });
  });
}

/** The first failing tests of a vitest log: "FAIL <file> > <test>" and the first line of its error. */
function vitestFailures(text, max = 8) {
  const lines = stripVTControlCharacters(text).split("\n");
  const found = [];
  const seen = new Set();
  for (let i = 0; i < lines.length && found.length < max; i++) {
    const m = /^\s*FAIL\s+(.*\S)\s*$/.exec(lines[i]);
    if (!m || seen.has(m[1])) continue;
    seen.add(m[1]);
    const error = [];
    for (let j = i + 1; j < lines.length && error.length < 4; j++) {
      const l = lines[j];
      if (!l.trim() || /^\s*(❯|FAIL\s|⎯)/.test(l)) break;
      error.push(l.trim().slice(0, 200));
    }
    found.push(`FAIL ${m[1].replace(/^__test__\//, "")}${error.length ? `\n    ${error.join(" | ")}` : ""}`);
  }
  return found;
}

/** The first failed checks of a pi CLI test script (harness.mjs's "  FAIL <what>" and its detail lines). */
function cliFailures(text, max = 6) {
  const lines = stripVTControlCharacters(text).split("\n");
  const found = [];
  for (let i = 0; i < lines.length && found.length < max; i++) {
    const m = /^\s*FAIL\s+(.*\S)\s*$/.exec(lines[i]);
    if (!m) continue;
    const detail = [];
    for (let j = i + 1; j < lines.length && detail.length < 2 && /^\s{4,}\S/.test(lines[j]); j++)
      detail.push(lines[j].trim().slice(0, 200));
    found.push(`FAIL ${m[1]}${detail.length ? `\n    ${detail.join(" | ")}` : ""}`);
  }
  return found;
}

const lastLine = (text, re) =>
  stripVTControlCharacters(text)
    .split("\n")
    .filter((l) => re.test(l))
    .at(-1)
    ?.trim();

// ---- the steps
const steps = []; // { name, ok, detail, skipped? }
const notes = [];
const step = (name, ok, detail, extra = {}) => {
  steps.push({ name, ok, detail, ...extra });
  console.log(
    `${ok ? "ok" : extra.skipped ? "skipped" : "FAILED"}: ${name}${detail ? ` — ${detail.split("\n")[0]}` : ""}`,
  );
};
const t0 = performance.now();
const seconds = (from) => `${((performance.now() - from) / 1000).toFixed(0)} s`;
console.log(`verify:pi ${spec}${opts.quick ? " --quick" : ""}${opts.cli ? "" : " --no-cli"}`);

// 1. install
let piDir = null;
let version = spec;
try {
  piDir = installPi(spec, { log: (m) => console.log(`  ${m}`) });
  version = piVersion(piDir);
  if (!parseVersion(version)) throw new Error(`its package.json says version ${JSON.stringify(version)}`);
  step("install", true, `pi ${version} at ${piDir}`);
} catch (e) {
  step("install", false, String(e.message ?? e));
}

// 2. fingerprints, in both forms, against the table
let prints = null;
if (piDir) {
  let r;
  try {
    const node22 = nodeBinary(22, { minMinor: 19 });
    r = await run(node22, [join(REPO, "scripts", "pi-verdict.mjs"), piDir], {}, false);
  } catch (e) {
    r = { code: -1, out: `no Node >= 22.19 for pi's bundle: ${e.message}` };
  }
  let verdict = null;
  try {
    verdict = r.code === 0 ? JSON.parse(r.out.trim().split("\n").at(-1)) : null;
  } catch {}
  const moduleFp = verdict?.module?.fingerprint ?? null;
  const bundleFp = verdict?.bundle?.fingerprint ?? null;
  if (!verdict) step("fingerprints", false, `pi-verdict.mjs failed: ${r.out.trim().split("\n").slice(-3).join(" ")}`);
  else if (!moduleFp || !bundleFp)
    step(
      "fingerprints",
      false,
      [
        moduleFp ? null : `no module fingerprint (${verdict.module?.why ?? "?"})`,
        bundleFp ? null : `no bundle fingerprint (${verdict.bundle?.why ?? "?"})`,
      ]
        .filter(Boolean)
        .join("; "),
    );
  else {
    prints = { module: moduleFp, bundle: bundleFp };
    const where = (form) => {
      const rows = table.releases.filter((x) => x[form] === prints[form]);
      return rows.length ? `in the table (pi ${rows.map((x) => x.pi).join(", ")})` : null;
    };
    const inModule = where("module");
    const inBundle = where("bundle");
    if (!inModule) notes.push("module fingerprint not in the table (new session module)");
    if (!inBundle)
      notes.push(
        `bundle fingerprint not in the table (${inModule ? "the same module, bundled otherwise" : "its bundled form is new too"})`,
      );
    step(
      "fingerprints",
      true,
      `module ${short(prints.module)} ${inModule ?? "not in the table"}; bundle ${short(prints.bundle)} ${inBundle ?? "not in the table"}` +
        (verdict.bundle.form && verdict.bundle.form !== "bundle"
          ? ` (pi's bin runs the ${verdict.bundle.form} form)`
          : ""),
    );
  }
}

// The table the checks below run with: the one given, plus this release's row when it has none (the
// gate lets ours run on a pi only with its row; the profile is chosen from that same table, as the
// row says: pi/gate.js and lib/profile.js read PI_SESSION_NATIVE_TABLE).
let candidateTable = null;
if (prints && parseVersion(version)) {
  const tableDir = mkdtempSync(join(tmpdir(), "verify-pi-"));
  process.on("exit", () => rmSync(tableDir, { recursive: true, force: true }));
  candidateTable = join(tableDir, "verified.json");
  const candidate = { pi: version, profile: profileFor(version, table.releases), ...prints };
  const releases = [...table.releases.filter((r) => r.pi !== version), candidate].sort((a, b) => compare(a.pi, b.pi));
  writeFileSync(candidateTable, `${JSON.stringify({ ...table, releases }, null, 2)}\n`);
}
const tableEnv = candidateTable ? { PI_SESSION_NATIVE_TABLE: candidateTable } : {};

// 3. the differential suites
if (piDir) {
  const from = performance.now();
  const args = [join(REPO, "scripts", "pi-versions.mjs")];
  if (opts.quick) args.push("--quick");
  if (opts.files) args.push("--files", opts.files);
  args.push(isPath(spec) ? resolve(spec) : spec);
  const r = await run(process.execPath, args, tableEnv);
  const counts = /^\s*[✓✗] pi \S+(?: \(= [^)]*\))?: (.*?), \d+ s/m.exec(r.out)?.[1] ?? `exit ${r.code}`;
  const log = /; log: (.*\.log)\s*$/m.exec(r.out)?.[1];
  let fails = [];
  if (r.code !== 0) {
    try {
      fails = vitestFailures(log ? readFileSync(log, "utf8") : r.out);
    } catch {
      fails = vitestFailures(r.out);
    }
    if (!fails.length) fails = r.out.trim().split("\n").slice(-5);
  }
  const what = opts.files ? ` (${opts.files})` : opts.quick ? " (quick)" : "";
  step(
    `differential suites${what}`,
    r.code === 0,
    [`${counts}, ${seconds(from)}`, ...fails, ...(log ? [`log: ${log}`] : [])].join("\n"),
  );
}

// 4. pi's CLI, stock vs pi-native, and the pi package
// --quick: the pi package's install and /resume rows only (package.mjs --quick)
for (const [name, script, extra] of [
  ["pi CLI (test:pi)", "test:pi", []],
  [
    `pi package (test:pi-package${opts.quick ? " --quick" : ""})`,
    "test:pi-package",
    opts.quick ? ["--", "--quick"] : [],
  ],
]) {
  if (!piDir) break;
  if (!opts.cli) {
    step(name, false, "--no-cli", { skipped: true });
    continue;
  }
  const from = performance.now();
  // the gate lets ours run on this pi only with its row: a copy of the table that has it (pi/gate.js)
  const r = await run("npm", ["run", "--silent", script, ...extra], {
    PI_TEST_PI: piDir,
    ...tableEnv,
  });
  const summary =
    lastLine(r.out, /checks (FAILED|passed)|SKIPPED/)?.replace(/\s*(?:in [\d.]+ s|\([\d.]+ s\))$/, "") ??
    `exit ${r.code}`;
  const fails = r.code === 0 ? [] : cliFailures(r.out);
  if (r.code !== 0 && !fails.length) fails.push(...r.out.trim().split("\n").slice(-5));
  step(name, r.code === 0, [`${summary}, ${seconds(from)}`, ...fails].join("\n"));
}

// ---- the verdict
const failed = steps.filter((s) => !s.ok && !s.skipped);
const verified = failed.length === 0 && prints !== null;
const profile = parseVersion(version) ? profileFor(version, table.releases) : null;
const row = prints
  ? {
      pi: version,
      profile,
      module: prints.module,
      bundle: prints.bundle,
      verified: new Date().toISOString().slice(0, 10),
    }
  : null;
const covering = prints
  ? table.releases.find((r) => r.module === prints.module && r.bundle === prints.bundle && r.profile === profile)
  : null;
if (covering)
  notes.push(`already covered: the table's row for pi ${covering.pi} has both fingerprints (profile ${profile})`);
const sameVersion = table.releases.find((r) => r.pi === version);
if (sameVersion) notes.push(`the table already has a row for pi ${version}`);
const skipped = steps.filter((s) => s.skipped).map((s) => s.name);
if (opts.quick || opts.files)
  notes.push(`the differential suites ran ${opts.files ? `only ${opts.files}` : "--quick"}`);
if (skipped.length) notes.push(`not run: ${skipped.join(", ")}`);

const report = [];
report.push("", "steps:");
for (const s of steps) {
  const [first, ...rest] = (s.detail ?? "").split("\n");
  report.push(`  ${(s.ok ? "ok" : s.skipped ? "skipped" : "FAILED").padEnd(8)} ${s.name}${first ? `: ${first}` : ""}`);
  for (const l of rest) report.push(`           ${l}`);
}
report.push("");
if (verified) {
  report.push(`verified: pi ${version}`);
  for (const n of notes) report.push(`  note: ${n}`);
  report.push(`row for ${opts.table === join(REPO, "pi", "verified.json") ? "pi/verified.json" : opts.table}:`);
  report.push(JSON.stringify(row, null, 2));
} else {
  report.push(`not verified: pi ${version}`);
  for (const s of failed) {
    const first = s.detail?.split("\n").find((l) => l.startsWith("FAIL "));
    report.push(
      `  - ${s.name} failed${s.detail ? `: ${s.detail.split("\n")[0]}` : ""}${first ? `; first: ${first.slice(5)}` : ""}`,
    );
  }
  if (piDir && !prints && !failed.some((s) => s.name === "fingerprints")) report.push("  - no fingerprints");
  for (const n of notes) report.push(`  note: ${n}`);
}
if (opts.write && verified) {
  if (sameVersion) report.push(`not written: ${opts.table} already has a row for pi ${version}`);
  else {
    table.releases.push(row);
    table.releases.sort((a, b) => compare(a.pi, b.pi));
    writeFileSync(opts.table, `${JSON.stringify(table, null, 2)}\n`);
    report.push(`written to ${opts.table}`);
  }
}
report.push(`(${seconds(t0)})`);
const text = report.join("\n");
console.log(text);

if (opts.json)
  writeFileSync(
    opts.json,
    `${JSON.stringify(
      {
        version,
        verified,
        row: verified ? row : null,
        alreadyCovered: covering ? covering.pi : null,
        notes,
        steps: steps.map(({ name, ok, detail, skipped }) => ({ name, ok, ...(skipped ? { skipped } : {}), detail })),
        report: text.trim(),
      },
      null,
      2,
    )}\n`,
  );
process.exit(verified ? 0 : 1);
