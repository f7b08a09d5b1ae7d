// Vitest setup file: runs in every test file's worker before its tests.
// Points PI_CODING_AGENT_DIR at a fresh temp dir so no test ever touches the real ~/.pi.
import { afterAll } from "vitest";
import { makeTempRoot, removeTempRoots } from "./tmp.mjs";
// DIFF_PI: the reference's release, and PI_SESSION_NATIVE_PI for ours, before any test file loads it.
import "./pi-version.mjs";

process.env.PI_CODING_AGENT_DIR = makeTempRoot("agent");
// The listing index too (it would go to the user's cache dir).
process.env.PI_SESSION_NATIVE_INDEX_DIR = makeTempRoot("index");

// scripts/arm64.mjs: the tests run on the architecture they were meant for (the loader picks
// the addon built for process.arch).
if (process.env.PSN_EXPECT_ARCH && process.arch !== process.env.PSN_EXPECT_ARCH) {
  throw new Error(`expected to run on ${process.env.PSN_EXPECT_ARCH}, this Node is ${process.arch}`);
}

afterAll(() => {
  removeTempRoots();
});
