// Loads the two implementations under test.
//   reference: the pinned JS SessionManager of @earendil-works/pi-coding-agent 1.6.0
//   ours:      this package (../index.js); with BENCH_SELF=1 a second, separate
//              instance of the reference, so the suite can be developed and
//              sanity-checked (every ratio should be ~1×) before ours exists.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const REFERENCE_URL = new URL("../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js", import.meta.url).href;
export const OURS_PATH = fileURLToPath(new URL("../index.js", import.meta.url));
export const SELF = process.env.BENCH_SELF === "1";

export const IMPL_NAMES = ["reference", "ours"];

/** @returns {Promise<{name: string, mod: any}>} */
export async function loadImpl(name) {
  if (name === "reference") return { name, mod: await import(REFERENCE_URL) };
  if (name !== "ours") throw new Error(`unknown implementation ${name}`);
  if (SELF) return { name, mod: await import(`${REFERENCE_URL}?bench-self`) };
  if (!existsSync(OURS_PATH)) {
    throw new Error(`${OURS_PATH} does not exist yet. Build the package first, or run with BENCH_SELF=1 to bench the reference against itself.`);
  }
  return { name, mod: createRequire(import.meta.url)(OURS_PATH) };
}

export function describeOurs() {
  return SELF ? "reference (BENCH_SELF=1: reference vs reference)" : "pi-session-native (../index.js)";
}

/**
 * Which native build is under test: the addon files next to index.js with a short
 * hash and mtime. Compared at the end of a run, because a rebuild during the run
 * would mix two builds (the RSS children load the binary afresh).
 */
export function oursBuildId() {
  if (SELF) return "reference";
  const root = dirname(OURS_PATH);
  try {
    return readdirSync(root)
      .filter((f) => f.endsWith(".node"))
      .map((f) => {
        const p = join(root, f);
        const sha = createHash("sha1").update(readFileSync(p)).digest("hex").slice(0, 10);
        return `${f} ${sha} (${statSync(p).mtime.toISOString()})`;
      })
      .join(", ") || "no .node file";
  } catch {
    return "unknown";
  }
}
