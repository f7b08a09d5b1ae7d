// Long strings of large sessions reach JS as external strings over memory the addon frees
// when V8 collects them (see `external_string` in src/ffi.rs). The checks need forced
// garbage collection, so they run in a child process started with --expose-gc.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CHILD = fileURLToPath(new URL("./strings-child.mjs", import.meta.url));

function runChild(env) {
  const r = spawnSync(process.execPath, ["--expose-gc", CHILD], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, ...env },
  });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

describe("strings handed to V8 without a copy", () => {
  it("stay intact while other sessions' strings are collected, and their memory is given back", () => {
    const result = runChild({});
    expect(result.ok).toBe(true);
    // 12 sessions of ~5 MiB of UTF-16 strings each went through: all of it is freed once
    // collected (nothing else is left reachable).
    expect(result.keptMiB).toBeGreaterThan(1);
    expect(result.leftMiB).toBeLessThan(1);
  });

  it("PI_SESSION_NATIVE_COPY_STRINGS=1 copies them instead, with the same results", () => {
    const result = runChild({ PI_SESSION_NATIVE_COPY_STRINGS: "1" });
    expect(result.ok).toBe(true);
    expect(result.keptMiB).toBe(0);
    expect(result.leftMiB).toBe(0);
  });
});
