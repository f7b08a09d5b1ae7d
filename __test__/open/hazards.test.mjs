// What JS holds never changes (docs/safety.md): a large session's image strings and the lines
// read lazily after `open` keep the bytes the file had at `open`, whatever another process (or
// pi's own rewrite) does to the file; and no signal handling that Node would not do. Each
// hazard runs in a child process with a timeout (a hang or a death by a signal fails), once
// with pi's own class and once with ours, with the same assertions.
// Linux and macOS (the snapshot is Unix; Windows copies), Node (Bun: scripts/bun.mjs).
import { spawnSync } from "node:child_process";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { writeImageSession } from "../helpers/images.mjs";
import { makeTempRoot, removeTempRoots } from "../helpers/tmp.mjs";

const CHILD = fileURLToPath(new URL("./hazards-child.mjs", import.meta.url));
const COUNT = 12;
const BYTES = 256 * 1024;

const dir = makeTempRoot("hazards");
afterAll(removeTempRoots);

/** One session (≥ 1 MiB: ours keeps its lines out of memory and its images mapped)… */
const TEMPLATE = join(dir, "template.jsonl");
const HASHES = writeImageSession(TEMPLATE, {
  images: COUNT,
  bytes: BYTES,
  id: "0193a000-0000-7000-8000-00000hazards",
  cwd: "/tmp/h",
  replies: true,
});
let n = 0;
/** …copied afresh for each run. */
function fresh() {
  const file = join(dir, `s${n++}.jsonl`);
  copyFileSync(TEMPLATE, file);
  return { file, hashes: HASHES };
}

function run(impl, mode, env = {}) {
  const { file, hashes } = fresh();
  const r = spawnSync(process.execPath, ["--expose-gc", CHILD, impl, file, mode], {
    encoding: "utf8",
    timeout: 60_000,
    killSignal: "SIGKILL",
    env: { ...process.env, ...env },
  });
  const got = r.status === 0 ? JSON.parse(r.stdout.trim().split("\n").pop()) : null;
  return { ...r, got, hashes };
}

/** Ran to its end: no hang (the timeout kills with SIGKILL), no signal, no error. */
function finished(r) {
  expect(r.error?.code, "no hang").toBe(undefined);
  expect(r.signal, r.stderr).toBe(null);
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return r.got;
}

describe.skipIf(process.platform === "win32" || process.versions.bun)("what JS holds never changes", () => {
  describe.each(["ref", "ours"])("%s", (impl) => {
    it("another process truncates the file: held images are unchanged", () => {
      const got = finished(run(impl, "truncate"));
      expect(got.images).toBe(COUNT);
      expect(got.same).toBe(true);
    });

    it("another process rewrites the file in place with other bytes: held images are unchanged", () => {
      expect(finished(run(impl, "inplace")).same).toBe(true);
    });

    it("truncated to 0 and the same bytes written back: held images are unchanged, Map lookups work", () => {
      const got = finished(run(impl, "restore"));
      expect(got.during).toBe(true);
      expect(got.same).toBe(true);
      expect(got.found).toBe(true);
    });

    it("pi's _rewriteFile pattern in this process: every image is intact on disk", () => {
      const r = run(impl, "rewrite");
      const got = finished(r);
      expect(got.disk).toEqual(r.hashes);
      expect(got.sizeSame).toBe(true);
      expect(got.same).toBe(true);
    });

    it("fs.writeSync of held strings after a truncation writes their bytes", () => {
      const got = finished(run(impl, "writesync"));
      expect(got.written).toBe(true);
      expect(got.same).toBe(true);
    });

    it("process.kill(pid, 'SIGBUS') reaches a JS listener", () => {
      const got = finished(run(impl, "kill"));
      expect(got.heard).toBe(true);
      expect(got.same).toBe(true);
    });

    it("process.kill(pid, 'SIGBUS') without a listener: the default action ends the process", () => {
      const r = run(impl, "kill-default");
      expect(r.error?.code, "no hang").toBe(undefined);
      expect(r.signal).toBe("SIGBUS");
    });

    it("a session deleted and collected while one image string lives pins at most that string's bytes", () => {
      const got = finished(run(impl, "pinned"));
      if (got.pinned === null) return; // /proc/self/map_files is not readable here
      expect(got.pinned).toBeLessThanOrEqual(got.held + 64 * 1024);
    });

    it("a manager that switches to a new session lets go of the old one's snapshot at once", () => {
      const got = finished(run(impl, "switch"));
      if (got.pinned === null) return; // /proc/self/map_files is not readable here
      expect(got.pinned).toBe(0);
    });

    it.each(["late", "on-off"])(
      "a SIGBUS listener added (%s) after open, then a truncation: no hang, no signal",
      (mode) => {
        const got = finished(run(impl, mode));
        expect(got.same).toBe(true);
        expect(got.entries).toBe(COUNT * 2);
      },
    );
  });

  // Lazy lines: ours reads a large session's lines when they are first needed; they must be the
  // lines the file had at open, as the reference (which reads them all at open) gives them.
  describe.each(["getEntries", "getBranch", "buildSessionContext"])("truncation before the first %s", (first) => {
    it("gives the reference's entries, no EIO", () => {
      const ref = finished(run("ref", `early:${first}`));
      const ours = finished(run("ours", `early:${first}`));
      expect(ref.error).toBe(undefined);
      expect(ours.error).toBe(undefined);
      expect(ref.count).toBe(COUNT * 2);
      expect(ours).toEqual(ref);
    });
  });

  // Without a snapshot (PI_SESSION_NATIVE_SNAPSHOT=memory: as where none can be made) a large
  // session is read into memory: the invariant holds the same way.
  it("ours without a snapshot (read into memory): the same", () => {
    const env = { PI_SESSION_NATIVE_SNAPSHOT: "memory" };
    expect(finished(run("ours", "truncate", env)).same).toBe(true);
    expect(finished(run("ours", "inplace", env)).same).toBe(true);
    const ref = finished(run("ref", "early:getEntries"));
    expect(finished(run("ours", "early:getEntries", env))).toEqual(ref);
  });

  // The snapshot made outside the session's folder (where O_TMPFILE is refused) and copied
  // (where no clone is possible): the same.
  it("ours with the snapshot in the private temp folder, copied: the same", () => {
    const env = { PI_SESSION_NATIVE_SNAPSHOT: "private,copy" };
    expect(finished(run("ours", "truncate", env)).same).toBe(true);
    expect(finished(run("ours", "inplace", env)).same).toBe(true);
  });
});
