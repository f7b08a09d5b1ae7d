// Temp directories for the differential tests. Removed at the end of each test file
// unless DIFF_KEEP=1 (then the paths are printed so failures can be inspected).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const roots = [];

/** Create a fresh temp dir named pi-diff-<label>-XXXXXX and remember it for cleanup. */
export function makeTempRoot(label) {
  const dir = mkdtempSync(join(tmpdir(), `pi-diff-${label}-`));
  roots.push(dir);
  return dir;
}

export function removeTempRoots() {
  if (process.env.DIFF_KEEP === "1") {
    if (roots.length) console.log(`[diff] DIFF_KEEP=1, kept temp dirs:\n  ${roots.join("\n  ")}`);
    return;
  }
  for (const dir of roots.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
}
