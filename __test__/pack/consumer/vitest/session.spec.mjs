import { describe, expect, test } from "vitest";
import * as api from "pi-session-native";
import { SessionManager } from "pi-session-native";
import { createRequire } from "node:module";

const { smoke } = createRequire(import.meta.url)("../smoke.cjs");

describe("pi-session-native under vitest", () => {
  test("a session round-trips", async () => {
    await expect(smoke(api)).resolves.toEqual({ entries: 3, messages: 2, listed: 1 });
  });
  test("in-memory sessions and errors", () => {
    const sm = SessionManager.inMemory("/p");
    const id = sm.appendMessage({ role: "user", content: "x", timestamp: 1 });
    expect(sm.getBranch().map((e) => e.id)).toEqual([id]);
    expect(sm.isPersisted()).toBe(false);
    expect(() => api.assertValidSessionId("../x")).toThrow(/Session id must be non-empty/);
  });
});
