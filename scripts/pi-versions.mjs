// npm run test:pi-versions: the differential suites (scripts/suites.mjs) against each pi release's own
// session module, ours running that release's profile (DIFF_PI=<version>, __test__/helpers/pi-version.mjs).
//
//   node scripts/pi-versions.mjs [--quick] [--all] [--files open/a.test.mjs,list/b.test.mjs] [<version | pi dir | .tgz>...]
//
// Releases: those given (a version, or a path to a pi package dir or tarball, as scripts/pi-cache.mjs
// takes), else every release in pi/verified.json, one per distinct session module
// (the table's `module` fingerprint: 1.0.3, 1.3.0 and 1.4.0 ship the same bytes) unless --all.
// Each is installed into .cache/pi/<version>/ if missing (scripts/pi-cache.mjs).
// --quick: the essential files with fewer seeds (for `npm test`); else every differential suite but the
// CLI's (cli/lifecycle.test.mjs), which runs the pi-sessions CLI against node_modules' pi alone and loads
// neither ours nor DIFF_PI's module.
// --files: only these files, paths relative to __test__ (verify:pi's own test uses it to stay short).
// Logs: .cache/pi-versions/<version>.log (<cache key>.log for a path). Exits 1 when any release fails.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { installPi, isPath, PI_CACHE, piVersion, REPO } from "./pi-cache.mjs";
import { DIFFERENTIAL } from "./suites.mjs";

const TESTS = "__test__";
const QUICK_FILES = [
  "pi/pi-versions.test.mjs",
  "context/free-functions.test.mjs",
  "tree/identity.test.mjs",
  "append/aliasing.test.mjs",
  "files-and-errors/fs-errors.test.mjs",
  "list/runtime.test.mjs",
  "open/files.test.mjs",
  "append/random-ops.test.mjs",
];
const QUICK_ENV = { DIFF_SEEDS: "40", DIFF_FREE_SEEDS: "40" };

const args = process.argv.slice(2);
const filesAt = args.indexOf("--files");
const only = filesAt === -1 ? null : args.splice(filesAt, 2)[1]?.split(",").filter(Boolean);
if (filesAt !== -1 && (!only?.length || only.some((f) => !existsSync(join(REPO, TESTS, f))))) {
  console.error("pi-versions: --files needs a comma-separated list of test files, paths relative to __test__");
  process.exit(2);
}
const flags = new Set(args.filter((a) => a.startsWith("--")));
for (const f of flags) {
  if (f !== "--quick" && f !== "--all") {
    console.error(`pi-versions: unknown option ${f} (known: --quick, --all, --files)`);
    process.exit(2);
  }
}
const quick = flags.has("--quick");
const given = args.filter((a) => !a.startsWith("--"));

const table = JSON.parse(readFileSync(join(REPO, "pi", "verified.json"), "utf8")).releases;

/** [{ version, alike }]: the releases to run, each with the releases whose module it stands for. */
function releases() {
  if (given.length) return given.map((version) => ({ version, alike: [] }));
  if (flags.has("--all")) return table.map((r) => ({ version: r.pi, alike: [] }));
  const byModule = new Map();
  for (const r of table) {
    const seen = byModule.get(r.module);
    if (seen) seen.alike.push(r.pi);
    else byModule.set(r.module, { version: r.pi, alike: [] });
  }
  return [...byModule.values()];
}

const files = only ? only : quick ? QUICK_FILES : DIFFERENTIAL;

const logDir = join(REPO, ".cache", "pi-versions");
mkdirSync(logDir, { recursive: true });
const vitest = join(REPO, "node_modules", "vitest", "vitest.mjs");

/** The counts line of vitest's summary ("Tests  3 failed | 340 passed (343)"), without colours. */
function summaryLine(out, label) {
  const plain = stripVTControlCharacters(out);
  return plain.match(new RegExp(`^\\s*${label}\\s+(.*)$`, "m"))?.[1]?.trim() ?? "?";
}

const started = performance.now();
const results = [];
const runs = releases();
console.log(
  `pi-versions: ${runs.map((r) => r.version).join(", ")}${quick ? " (quick)" : ""}; ${files.length} files: ${files.join(" ")}`,
);
for (const { version, alike } of runs) {
  const t0 = performance.now();
  let piDir;
  try {
    piDir = installPi(version, { log: (m) => console.log(`  ${m}`) });
  } catch (e) {
    results.push({ version, alike, ok: false, tests: `not installed: ${e.message}`, seconds: 0 });
    console.log(`✗ pi ${version}: ${e.message}`);
    continue;
  }
  // a path goes on resolved, so that the suites' installPi() finds this install (its key is the path)
  const DIFF_PI = isPath(version) ? resolve(version) : version;
  const env = { ...process.env, ...(quick ? QUICK_ENV : {}), DIFF_PI, FORCE_COLOR: "0" };
  delete env.PI_SESSION_NATIVE_PI; // set by the harness from DIFF_PI
  delete env.DIFF_SELF;
  delete env.DIFF_SABOTAGE;
  const r = spawnSync(process.execPath, [vitest, "run", ...files.map((f) => join(TESTS, f))], {
    cwd: REPO,
    env,
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  // a path's log is named by its cache dir (.cache/pi/local-<hash>/)
  const log = join(logDir, `${relative(PI_CACHE, piDir).split(sep)[0]}.log`);
  writeFileSync(log, out);
  const seconds = (performance.now() - t0) / 1000;
  const ok = r.status === 0;
  const row = { version: piVersion(piDir), alike, ok, tests: summaryLine(out, "Tests"), seconds };
  results.push(row);
  console.log(
    `${ok ? "✓" : "✗"} pi ${row.version}${alike.length ? ` (= ${alike.join(", ")})` : ""}: ${row.tests}, ${seconds.toFixed(0)} s${ok ? "" : `; log: ${log}`}`,
  );
  if (!ok) {
    // The failing tests' names and first lines.
    const plain = stripVTControlCharacters(out);
    const fails = plain.split("\n").filter((l) => /^\s*(FAIL|×)\s/.test(l));
    for (const l of [...new Set(fails)].slice(0, 20)) console.log(`    ${l.trim()}`);
  }
}

const failed = results.filter((r) => !r.ok);
const total = (performance.now() - started) / 1000;
console.log(
  `\npi-versions${quick ? " --quick" : ""}: ${results.length - failed.length} of ${results.length} releases passed in ${total.toFixed(0)} s` +
    (failed.length ? `; failed: ${failed.map((r) => r.version).join(", ")}` : ""),
);
process.exit(failed.length ? 1 : 0);
