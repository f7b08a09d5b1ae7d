// Long plain string values (base64 images) of a large session become JS strings over a
// read-only mapping of a private snapshot of the session file (`platform::snapshot`,
// `platform::Mapping`, docs/performance.md): their bytes stay in the page cache, outside the
// process, until something reads them. These tests hold the memory bound, and that the strings
// keep their bytes whatever happens to the session file, each in a child process: another
// process truncating it, rewriting it by rename (this library's and pi's way) or in place
// (every hazard against the reference: hazards.test.mjs).
// Linux only: the RSS is read from /proc, and Windows does not map (it copies, as before).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { writeImageSession } from "../helpers/images.mjs";
import { makeTempRoot, removeTempRoots } from "../helpers/tmp.mjs";

const CHILD = fileURLToPath(new URL("./mapped-child.mjs", import.meta.url));
const MiB = 2 ** 20;

const dir = makeTempRoot("mapped");
afterAll(removeTempRoots);

/** A session of `count` user prompts with a `bytes`-long base64 image each; the images' sha256. */
const writeSession = (path, count, bytes) =>
  writeImageSession(path, { images: count, bytes, id: "0193a000-0000-7000-8000-0000000mapped", cwd: "/tmp/m" });

function run(file, mode, env = {}) {
  const r = spawnSync(process.execPath, [CHILD, file, mode], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, ...env },
  });
  return { ...r, got: r.status === 0 ? JSON.parse(r.stdout.trim().split("\n").pop()) : null };
}

describe.skipIf(process.platform !== "linux" || process.versions.bun)("images that stay in the mapped file", () => {
  it("1 GiB of images: open + getBranch + getEntries + context in a bounded RSS, and copied without the mapping", () => {
    const file = join(dir, "big.jsonl");
    const hashes = writeSession(file, 256, 4 * MiB);
    const mapped = run(file, "rss");
    expect(mapped.stderr).toBe("");
    expect(mapped.got.images).toBe(256);
    expect(mapped.got.sampled).toEqual([hashes[0], hashes[128], hashes[255]]);
    expect(mapped.got.peakMiB).toBeLessThan(250);
    // The same run with strings copied (as on hosts without the mapping) holds the images:
    // the bound above tells the two apart.
    const copied = run(file, "rss", { PI_SESSION_NATIVE_COPY_STRINGS: "1" });
    expect(copied.got.sampled).toEqual(mapped.got.sampled);
    expect(copied.got.peakMiB).toBeGreaterThan(1000);
  });

  describe("while the strings are alive", () => {
    const COUNT = 8;
    const fresh = (name) => {
      const file = join(dir, `${name}.jsonl`);
      return { file, hashes: writeSession(file, COUNT, 256 * 1024) };
    };

    it("another process truncates the file: no signal; every string keeps its bytes", () => {
      const { file, hashes } = fresh("truncate");
      const r = run(file, "truncate");
      expect(r.signal).toBe(null);
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      expect(r.got.lengths).toEqual(hashes.map(() => 256 * 1024));
      // Images before and past the new end alike.
      expect(r.got.after).toEqual(hashes);
      expect(r.got.nul).toEqual(Array(COUNT).fill(false));
    });

    it("the session is replaced by rename (this library's rewrites): the strings keep their content", () => {
      const { file, hashes } = fresh("rename");
      const r = run(file, "rename");
      expect(r.stderr).toBe("");
      expect(r.got.after).toEqual(hashes);
    });

    it("another program rewrites the file in place: the strings keep their bytes", () => {
      const { file, hashes } = fresh("inplace");
      const r = run(file, "inplace");
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      expect(r.got.after).toEqual(hashes);
      expect(r.got.zed).toEqual(Array(COUNT).fill(false));
    });
  });
});
