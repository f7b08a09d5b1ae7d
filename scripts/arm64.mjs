// linux-arm64 on an x64 Linux host: the addon cross-compiled with Debian's aarch64 gcc, then run
// under qemu-user with the registry's arm64 Node. arm64 takes the portable (non-SIMD) scanner and
// decoders, which no x64 run of the addon reaches.
//
//   node scripts/arm64.mjs build         npm run build:arm64: pi-session-native.linux-arm64-gnu.node
//   node scripts/arm64.mjs build test    npm run test:arm64: that, then the tests below
//
// The tests: `cargo test --lib` of the core for aarch64 (qemu as cargo's runner), then for each
// Node major in ARM64_NODE (default "20 22 24") one emulated Node running Vitest in worker
// threads of that one process: on ARM64_FULL (default "22") the differential and safety tests
// of FULL, on the others the smaller SMOKE set (emulation runs both implementations ~10x slower
// than x64, the JS reference included). A child
// process an emulated Node spawns would be an arm64 binary, which the kernel runs only with a
// binfmt_misc entry for qemu; when there is one (`node scripts/arm64.mjs binfmt` registers it,
// as root, for the whole machine; `unbinfmt` removes it), the tests that spawn Node children run
// too, otherwise they are skipped (CHILD_FILES, CHILD_TESTS). CI does not register it.
//
// Env: ARM64_NODE, ARM64_FULL (majors), ARM64_NO_CARGO=1 (skip cargo test).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { majors, napiBuildArgs, steps } from "./steps.mjs";
import { CLI_DIFFERENTIAL, DIFFERENTIAL } from "./suites.mjs";
import { nodeBinary, REPO, runPrefix } from "./node-bin.mjs";

const TARGET = "aarch64-unknown-linux-gnu";
const SYSROOT = "/usr/aarch64-linux-gnu";
const ADDON = join(REPO, "pi-session-native.linux-arm64-gnu.node");
const CROSS_ENV = {
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER: "aarch64-linux-gnu-gcc",
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER: `qemu-aarch64 -L ${SYSROOT}`,
};

// The differential tests (random operations; the adversarial corpus, discovery and listing; the
// first operation after open, which materialises entries, trees and contexts with their long
// strings; the free functions, identity, aliasing), the safety tests, the mutated-file corpus.
const FULL = {
  files: [
    ...[...DIFFERENTIAL, ...CLI_DIFFERENTIAL].map((f) => `__test__/${f}`),
    "__test__/append/safety.test.mjs",
    "__test__/open/mutated-files.test.mjs",
  ],
  env: {
    DIFF_SEEDS: "40",
    DIFF_OPS: "40",
    DIFF_COLD_OPS: "getEntries,getTree,buildSessionContext,createBranchedSession",
  },
};
// Each Node's N-API and V8 strings: a few random-operation seeds (open, reopen, getters,
// entries and trees materialised), the safety tests.
const SMOKE = {
  files: ["__test__/append/random-ops.test.mjs", "__test__/append/safety.test.mjs"],
  env: { DIFF_SEEDS: "12", DIFF_OPS: "40" },
};
// Emulation runs ~10x slower than x64, more on a busy machine: vitest.config.mjs's 60 s per
// test is not enough.
const TIMEOUTS = ["--testTimeout=900000", "--hookTimeout=900000"];
// Tests that spawn Node children (see the top): run only with binfmt_misc.
const CHILD_FILES = [
  "__test__/open/strings.test.mjs",
  "__test__/open/heap.test.mjs",
  "__test__/list/listing-index.test.mjs",
  "__test__/list/collation.test.mjs",
];
const CHILD_TESTS = ["EFBIG", "SIGKILL at random moments", "two processes appending concurrently"];

const { step, run, report } = steps("arm64");

/** Whether the kernel runs aarch64 ELF binaries (a binfmt_misc entry for qemu-aarch64). */
function binfmtEnabled() {
  const dir = "/proc/sys/fs/binfmt_misc";
  try {
    if (readFileSync(join(dir, "status"), "utf8").trim() !== "enabled") return false;
    return readdirSync(dir).some((f) => {
      if (f === "status" || f === "register") return false;
      const text = readFileSync(join(dir, f), "utf8");
      return text.startsWith("enabled") && /interpreter .*qemu-aarch64/.test(text);
    });
  } catch {
    return false;
  }
}

/** Registers qemu-aarch64 for aarch64 ELF executables (root; the F flag opens qemu now). */
function binfmtRegister() {
  const dir = "/proc/sys/fs/binfmt_misc";
  if (binfmtEnabled()) return console.log("[arm64] binfmt_misc: qemu-aarch64 is registered already");
  if (!existsSync(join(dir, "register"))) execFileSync("mount", ["-t", "binfmt_misc", "binfmt_misc", dir]);
  const qemu = execFileSync("sh", ["-c", "command -v qemu-aarch64"]).toString().trim();
  // Debian's qemu-user-binfmt magic and mask for aarch64 ELF executables.
  const magic = "\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00";
  const mask = "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff";
  writeFileSync(join(dir, "register"), `:qemu-aarch64:M::${magic}:${mask}:${qemu}:F`);
  console.log(`[arm64] binfmt_misc: registered ${qemu} for aarch64 executables`);
}

/** Removes the entry `binfmt` registered. */
function binfmtUnregister() {
  const entry = "/proc/sys/fs/binfmt_misc/qemu-aarch64";
  if (!existsSync(entry)) return console.log("[arm64] binfmt_misc: no qemu-aarch64 entry");
  writeFileSync(entry, "-1");
  console.log("[arm64] binfmt_misc: removed qemu-aarch64");
}

function build() {
  step("setup (apt, rustup target, arm64 Node, rolldown binding)", () =>
    run("bash", ["scripts/cross-setup.sh", "arm64"]),
  );
  step(`napi build --release --target ${TARGET}`, () => run("npx", napiBuildArgs(TARGET), { env: CROSS_ENV }));
  if (!existsSync(ADDON)) throw new Error(`${ADDON} was not built`);
}

function test() {
  if (process.env.ARM64_NO_CARGO !== "1") {
    step(`cargo test --lib --target ${TARGET} (qemu)`, () =>
      run("cargo", ["test", "-p", "pi-session-core", "--lib", "--quiet", "--target", TARGET], { env: CROSS_ENV }),
    );
  }
  const children = binfmtEnabled();
  const filter = [];
  if (!children) {
    const skip = CHILD_TESTS.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    filter.push("--testNamePattern", `^(?!.*(${skip})).*$`);
    // A set that names a whole folder would take them in again.
    for (const f of CHILD_FILES) filter.push("--exclude", f);
    console.log(
      `[arm64] no binfmt_misc entry for qemu-aarch64: skipping ${CHILD_FILES.join(", ")} and "${CHILD_TESTS.join('", "')}"`,
    );
  }
  const full = majors(process.env.ARM64_FULL ?? "22");
  for (const major of majors(process.env.ARM64_NODE ?? "20 22 24")) {
    const set = full.includes(major) ? FULL : SMOKE;
    const files = children ? [...set.files, ...CHILD_FILES] : set.files;
    const node = nodeBinary(major, { arch: "arm64" });
    const [qemu, ...qemuArgs] = runPrefix("arm64");
    step(`vitest on arm64 Node ${major}, ${set === FULL ? "full" : "smoke"} set (qemu)`, () =>
      run(
        qemu,
        [
          ...qemuArgs,
          node,
          "node_modules/vitest/vitest.mjs",
          "run",
          "--pool=threads",
          ...TIMEOUTS,
          ...filter,
          ...files,
        ],
        {
          env: {
            QEMU_LD_PREFIX: SYSROOT,
            // rolldown's arm64 binding (scripts/cross-setup.sh), for Vitest itself.
            NODE_PATH: join(REPO, ".cache", "arm64-modules", "node_modules"),
            // Children named `node` (the safety tests' writers) are arm64 Node too.
            PATH: `${dirname(node)}${delimiter}${process.env.PATH}`,
            PSN_EXPECT_ARCH: "arm64",
            ...set.env,
          },
        },
      ),
    );
  }
}

const actions = { build, test, binfmt: binfmtRegister, unbinfmt: binfmtUnregister };
const wanted = process.argv.slice(2);
if (wanted.length === 0 || wanted.some((a) => !actions[a])) {
  console.error(`usage: node scripts/arm64.mjs ${Object.keys(actions).join("|")}...`);
  process.exit(2);
}
// The cross toolchain and qemu come from Debian/Ubuntu packages for an x64 host. Elsewhere
// (macOS, Windows, an arm64 host, whose own `npm test` runs the arm64 paths natively) say so.
if (`${process.platform}-${process.arch}` !== "linux-x64") {
  console.log(
    `[arm64] skipped: emulated arm64 runs need a linux-x64 host (this is ${process.platform}-${process.arch})`,
  );
  process.exit(0);
}
for (const a of wanted) actions[a]();
report();
