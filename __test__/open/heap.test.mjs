// A session's long strings (base64 images, tool output) reach JS outside V8's heap (external
// strings, see `PieceJs` in src/native_session.rs), so a session whose images are several
// times Node's heap still opens, builds its context and takes appends: at Node's default
// heap of ~4 GB, a 4.5 GB image-heavy session aborted the process ("Reached heap limit") in
// the reference and, before, in ours. Here the same at a 48 MB heap and ~170 MB of images.
// The copying path (PI_SESSION_NATIVE_COPY_STRINGS=1) must die there, or the test proves
// nothing. Node only: Bun has no --max-old-space-size.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { writeImageSession } from "../helpers/images.mjs";
import { makeTempRoot, removeTempRoots } from "../helpers/tmp.mjs";

const CHILD = fileURLToPath(new URL("./heap-child.mjs", import.meta.url));
const HEAP_MB = 48;
const IMAGES = 42;
const IMAGE_BYTES = 4 * 2 ** 20;

const dir = makeTempRoot("heap");
afterAll(removeTempRoots);

/** An image-heavy session (user screenshots, assistant replies) and the sha256 of each image. */
const writeSession = (path) =>
  writeImageSession(path, {
    images: IMAGES,
    bytes: IMAGE_BYTES,
    id: "0193a000-0000-7000-8000-00000000heap",
    cwd: "/tmp/heap",
    replies: true,
  });

const run = (file, env = {}) =>
  spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, CHILD, file], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, ...env },
  });

describe.skipIf(process.versions.bun)("a session larger than Node's heap", () => {
  const file = join(dir, "images.jsonl");
  const hashes = writeSession(file);

  it("opens, builds its context, walks its branch and appends, every image intact", () => {
    const r = run(file);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const got = JSON.parse(r.stdout.trim().split("\n").pop());
    expect(got.context).toEqual(hashes);
    expect(got.branch).toEqual(hashes);
    expect(got.messagesAfter).toBe(IMAGES * 2 + 1);
    expect(got.heapMiB).toBeLessThan(HEAP_MB);
  });

  it("copying the strings into the heap instead dies there (the check above can fail)", () => {
    const r = run(file, { PI_SESSION_NATIVE_COPY_STRINGS: "1" });
    expect(r.status === 0 && r.signal === null).toBe(false);
    expect(r.stderr).toMatch(/heap/i);
  });
});
