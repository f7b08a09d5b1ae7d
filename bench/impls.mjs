// Loads the two implementations under test.
//   reference: the pinned JS SessionManager of @earendil-works/pi-coding-agent 1.6.0
//   ours:      this package (../index.js); with BENCH_SELF=1 a second, separate
//              instance of the reference, so the suite can be developed and
//              sanity-checked (every ratio should be ~1×) before ours exists.

import { createHash } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const REFERENCE_URL = new URL(
  "../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js",
  import.meta.url,
).href;
const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
/** index.js of ours: the package, or the snapshot made by `snapshotOurs` (BENCH_OURS_DIR). */
export const oursPath = () => join(process.env.BENCH_OURS_DIR || PACKAGE_DIR, "index.js");
export const SELF = process.env.BENCH_SELF === "1";

export const IMPL_NAMES = ["reference", "ours"];

/**
 * `clearCaches()` forgets what an implementation keeps between calls (ours: listing rows
 * of unchanged files, in memory and in the listing index on disk), so an operation can be
 * timed as on the very first listing.
 * @returns {Promise<{name: string, mod: any, clearCaches: () => void}>}
 */
export async function loadImpl(name) {
  const nothing = () => {};
  if (name === "reference") return { name, mod: await import(REFERENCE_URL), clearCaches: nothing };
  if (name !== "ours") throw new Error(`unknown implementation ${name}`);
  if (SELF) return { name, mod: await import(`${REFERENCE_URL}?bench-self`), clearCaches: nothing };
  const path = oursPath();
  if (!existsSync(path)) {
    throw new Error(
      `${path} does not exist yet. Build the package first, or run with BENCH_SELF=1 to bench the reference against itself.`,
    );
  }
  const require = createRequire(import.meta.url);
  const { binding } = require(join(dirname(path), "lib", "native.js"));
  const clearCaches = () => {
    binding.clearScanCache();
    // And the listing index on disk: nothing cached at all, as on the very first listing.
    if (process.env.PI_SESSION_NATIVE_INDEX_DIR)
      rmSync(process.env.PI_SESSION_NATIVE_INDEX_DIR, { recursive: true, force: true });
  };
  return { name, mod: require(path), clearCaches };
}

export function describeOurs() {
  return SELF
    ? "reference (BENCH_SELF=1: reference vs reference)"
    : `pi-session-native (index.js${process.env.BENCH_OURS_DIR ? ", snapshot of the package taken at start" : ""})`;
}

/** Which native build is under test: the addon files next to index.js, with a short hash and mtime. */
export function oursBuildId(root = dirname(oursPath())) {
  if (SELF) return "reference";
  try {
    return (
      readdirSync(root)
        .filter((f) => f.endsWith(".node"))
        .map((f) => {
          const p = join(root, f);
          const sha = createHash("sha1").update(readFileSync(p)).digest("hex").slice(0, 10);
          return `${f} ${sha} (${statSync(p).mtime.toISOString()})`;
        })
        .join(", ") || "no .node file"
    );
  } catch {
    return "unknown";
  }
}

/**
 * Copy the runtime files of ours (index.js, lib/, pi/, binding.js, *.node, package.json)
 * to `dir` and point BENCH_OURS_DIR there, so that a rebuild while the benchmark
 * runs cannot mix two builds (RSS children load the addon afresh). Returns false
 * when there is nothing to snapshot (BENCH_SELF, or ours not built).
 */
export function snapshotOurs(dir) {
  if (SELF || process.env.BENCH_OURS_DIR || !existsSync(join(PACKAGE_DIR, "index.js"))) return false;
  for (const f of readdirSync(PACKAGE_DIR)) {
    if (
      f === "index.js" ||
      f === "index.mjs" ||
      f === "binding.js" ||
      f === "package.json" ||
      f === "lib" ||
      f === "pi" || // pi/verified.json: lib/profile.js's table
      f.endsWith(".node")
    ) {
      cpSync(join(PACKAGE_DIR, f), join(dir, f), { recursive: true, preserveTimestamps: true });
    }
  }
  process.env.BENCH_OURS_DIR = dir;
  return true;
}

/**
 * Peak resident set in KiB. On Linux VmHWM, the high-water mark of this process's
 * own address space: getrusage's maxRSS survives execve, so a child spawned from
 * the (large) benchmark process would report the parent's RSS at fork time.
 * Elsewhere `process.resourceUsage().maxRSS`.
 */
export function peakKiB() {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]);
  } catch {}
  return process.resourceUsage().maxRSS;
}
