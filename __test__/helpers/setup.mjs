// Vitest setup file: runs in every test file's worker before its tests.
// Points PI_CODING_AGENT_DIR at a fresh temp dir so no test ever touches the real ~/.pi.
import { afterAll } from "vitest";
import { makeTempRoot, removeTempRoots } from "./tmp.mjs";

process.env.PI_CODING_AGENT_DIR = makeTempRoot("agent");

afterAll(() => {
  removeTempRoots();
});
