// npm run test:bun: the differential suites under Bun, against pi 1.6.0's own class under
// the same Bun (extension authors run `bun test`; Bun loads N-API addons).
//
// Bun comes from the npm registry: `@oven/bun-<platform>@<version>` (BUN_VERSION, default
// 1.4.5) is packed into `.cache/bun-<version>/` (gitignored), as scripts/node-bin.mjs does
// for Node. Each test file runs in its own `bun test` process: Bun's runner takes the
// files' `vitest` imports as its own (`bun:test`), with the Vitest setup file preloaded (a
// temp PI_CODING_AGENT_DIR and listing index dir per file). Both sides run on Bun: the
// reference (`dist/core/session-manager.js`) and ours, compared by the same helpers
// (normalize, snapshot, compare) as under Node; children that tests spawn
// (`process.execPath`) are Bun too.
//
//   npm run test:bun                     # every suite below
//   node scripts/bun.mjs __test__/open/files.test.mjs …   # some of them
//   DIFF_SEEDS=200 npm run test:bun      # more random-op seeds (default here 120 × 80 ops)
//
// Prints a line per file and, last, `N passed, N failed`; exits 1 on any failure (the
// output of a failing file is printed whole).
//
// Not run under Bun, and why:
//   __test__/list/listing-index.test.mjs   its checks are of the listing index (bytes read
//                                in a warm process, index files written), which listings
//                                under Bun 1.4.5 do not use: Bun's readline also splits lines
//                                at U+2028 and U+2029, so the core scans at those too, without
//                                the index (its rows are of Node's lines; lib/runtime.js).
//                                Listings in fresh Bun processes against the reference are
//                                still checked by collation.test.mjs.
//   __test__/append/ids.test.mjs   uses `vi.setSystemTime`, which Bun's `vi` does not have
//                                (a unit test of the ids and timestamps, not of a runtime answer).
//   __test__/types (tsc), e2e (pi's own agent), pi (pi's CLI and pi-native, whose loader
//                                hook is Node's `module.registerHooks`), pack (npm installs on
//                                Node 20/22/24), musl and arm64 (Node builds): they test Node
//                                or the package, not the class under another runtime.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CACHE = join(REPO, ".cache");
export const BUN_VERSION = process.env.BUN_VERSION || "1.4.5";

/** Every file this script runs, with its environment. */
export const SUITES = [
  [
    "__test__/append/random-ops.test.mjs",
    { DIFF_SEEDS: process.env.DIFF_SEEDS ?? "120", DIFF_OPS: process.env.DIFF_OPS ?? "80" },
  ],
  ["__test__/open/files.test.mjs"],
  ["__test__/context/free-functions.test.mjs"],
  ["__test__/tree/identity.test.mjs"],
  ["__test__/open/mapped-strings.test.mjs"],
  ["__test__/append/aliasing.test.mjs"],
  ["__test__/open/cold-ops.test.mjs"],
  ["__test__/append/in-process.test.mjs"],
  ["__test__/list/progress-yield.test.mjs"],
  ["__test__/list/collation.test.mjs"],
  ["__test__/list/runtime.test.mjs"],
  ["__test__/append/safety.test.mjs"],
  ["__test__/open/mutated-files.test.mjs"],
  ["__test__/open/strings.test.mjs"],
];

function platformPackage() {
  const arch = { x64: "x64", arm64: "aarch64" }[process.arch];
  const os = { linux: "linux", darwin: "darwin", win32: "windows" }[process.platform];
  if (!arch || !os) throw new Error(`no Bun package for ${process.platform}-${process.arch}`);
  let name = `@oven/bun-${os}-${arch}`;
  // Bun's default x64 Linux build needs AVX2; the baseline build runs on any x64.
  if (os === "linux" && arch === "x64") {
    let cpu = "";
    try {
      cpu = readFileSync("/proc/cpuinfo", "utf8");
    } catch {}
    if (cpu && !/\bavx2\b/.test(cpu)) name += "-baseline";
  }
  return name;
}

/** Path to the `bun` binary of BUN_VERSION, fetched from the npm registry when missing. */
export function bunBinary(version = BUN_VERSION) {
  const dir = join(CACHE, `bun-${version}`);
  const bin = join(dir, "package", "bin", process.platform === "win32" ? "bun.exe" : "bun");
  if (existsSync(bin)) return bin;
  const pkg = platformPackage();
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  process.stderr.write(`fetching ${pkg}@${version} into ${dir}\n`);
  execFileSync("npm", ["pack", `${pkg}@${version}`, "--silent", "--pack-destination", tmp], {
    stdio: ["ignore", "ignore", "inherit"],
    shell: process.platform === "win32",
  });
  const tgz = readdirSync(tmp).find((f) => f.endsWith(".tgz"));
  if (!tgz) throw new Error(`npm pack ${pkg}@${version} produced no tarball`);
  execFileSync("tar", ["xzf", join(tmp, tgz), "-C", tmp]);
  rmSync(join(tmp, tgz));
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  const got = execFileSync(bin, ["--version"]).toString().trim();
  if (got !== version) throw new Error(`${bin} is Bun ${got}, expected ${version}; delete ${dir}`);
  return bin;
}

/** The counts of a `bun test --reporter=junit` file: { tests, failures, skipped }. */
function junitCounts(file) {
  const xml = existsSync(file) ? readFileSync(file, "utf8") : "";
  const root = /<testsuites\b[^>]*>/.exec(xml)?.[0] ?? "";
  const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(root)?.[1] ?? Number.NaN);
  return { tests: attr("tests"), failures: attr("failures"), skipped: attr("skipped") };
}

function main(argv) {
  if (!readdirSync(REPO).some((f) => f.endsWith(".node"))) {
    console.error("no addon (*.node) in the repo root: npm run build first");
    process.exit(2);
  }
  const bun = bunBinary();
  const wanted = argv.length ? argv.map((f) => f.replace(/^\.\//, "")) : null;
  const suites = wanted ? SUITES.filter(([f]) => wanted.includes(f)) : SUITES;
  if (wanted && suites.length !== wanted.length) {
    const known = new Set(SUITES.map(([f]) => f));
    console.error(`not a Bun suite: ${wanted.filter((f) => !known.has(f)).join(", ")}`);
    process.exit(2);
  }
  const out = join(CACHE, "bun-junit");
  mkdirSync(out, { recursive: true });
  console.log(`Bun ${BUN_VERSION} (${bun}): ${suites.length} test files, reference and ours both on Bun`);
  const started = performance.now();
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const [file, env = {}] of suites) {
    const report = join(out, `${file.replace(/[\\/]/g, "_")}.xml`);
    rmSync(report, { force: true });
    const t0 = performance.now();
    const r = spawnSync(
      bun,
      [
        "test",
        "--timeout=60000",
        "--preload=./__test__/helpers/setup.mjs",
        "--reporter=junit",
        `--reporter-outfile=${report}`,
        `./${file}`,
      ],
      { cwd: REPO, env: { ...process.env, ...env }, encoding: "utf8", maxBuffer: 256 << 20 },
    );
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    const c = junitCounts(report);
    // A file that did not load, or an error between tests, fails the file even when no test did.
    const fileFailed = r.status !== 0 && !(c.failures > 0);
    const fails = (Number.isNaN(c.failures) ? 0 : c.failures) + (fileFailed ? 1 : 0);
    const passes = Number.isNaN(c.tests) ? 0 : c.tests - c.failures - c.skipped;
    passed += passes;
    failed += fails;
    skipped += Number.isNaN(c.skipped) ? 0 : c.skipped;
    const note = fileFailed ? ` (bun exited ${r.status ?? r.signal})` : "";
    console.log(
      `${fails ? "FAIL" : "ok  "} ${file}: ${passes} passed, ${fails} failed${c.skipped ? `, ${c.skipped} skipped` : ""}${note}  ${seconds} s`,
    );
    if (fails) process.stdout.write(`${r.stdout}${r.stderr}\n`);
  }
  const total = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`Bun ${BUN_VERSION}: ${suites.length} files in ${total} s${skipped ? `, ${skipped} skipped` : ""}`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
