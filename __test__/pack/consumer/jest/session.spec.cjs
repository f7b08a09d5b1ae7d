"use strict";
const api = require("pi-session-native");
const { SessionManager } = api;
const { smoke } = require("../smoke.cjs");

describe("pi-session-native under jest", () => {
  test("a session round-trips", async () => {
    await expect(smoke(api)).resolves.toEqual({ entries: 3, messages: 2, listed: 1 });
  });
  test("in-memory sessions and errors", () => {
    const sm = SessionManager.inMemory("/p");
    const id = sm.appendMessage({ role: "user", content: "x", timestamp: 1 });
    expect(sm.getBranch().map((e) => e.id)).toEqual([id]);
    expect(sm.isPersisted()).toBe(false);
    expect(() => api.assertValidSessionId("../x")).toThrow(/Session id must be non-empty/);
    expect(() => SessionManager.open(__dirname)).toThrow(/EISDIR/);
  });
});
