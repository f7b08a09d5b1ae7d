// The compound operations read the session once (issue #36): `forkFrom` and
// `createBranchedSession` read at most 1.05x the session's size, `open` about 1x. Measured
// as `rchar` of /proc/self/io in a child process (Linux only), around the operation alone.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { generateSession } from "../../support/gen.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = makeTempRoot("reads");
const file = join(root, "src", "s.jsonl");

function measure(op) {
  const dir = join(root, `out-${op}`);
  mkdirSync(dir, { recursive: true });
  const out = execFileSync(process.execPath, [join(here, "reads-child.cjs"), op, file, dir], { encoding: "utf8" });
  return JSON.parse(out);
}

describe.runIf(process.platform === "linux")("bytes read by one operation", () => {
  mkdirSync(dirname(file), { recursive: true });
  generateSession(file, { seed: 36, cwd: "/tmp/reads", targetBytes: 4 << 20, startMs: Date.UTC(2026, 0, 1) });

  for (const [op, limit] of [
    ["fork", 1.05],
    ["branch", 1.05],
    ["open", 1.05],
  ]) {
    it(`${op}: at most ${limit}x the session`, () => {
      const { size, read } = measure(op);
      expect(size).toBeGreaterThan(3 << 20);
      expect(read / size, `${read} bytes read of a ${size}-byte session`).toBeLessThanOrEqual(limit);
    });
  }
});
