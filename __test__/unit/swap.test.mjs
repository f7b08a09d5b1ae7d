// lib/swap.js: the swap of pi's SessionManager statics (the pi package's extension, pi-native). The flows
// inside pi are __test__/pi/package.mjs and run.mjs; these are the rules on their own.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const swap = require("../../lib/swap.js");
const ours = require("../../index.js").SessionManager;
const PI_SM = join(
  import.meta.dirname,
  "../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js",
);
const pi = await import(pathToFileURL(PI_SM).href);
const PARTIAL = Symbol.for("pi-session-native.partialLists");

describe("the gate", () => {
  it("passes pi 1.6.0's own class, and nothing else", () => {
    expect(swap.unverified(pi.SessionManager, "1.6.0")).toBeNull();
    expect(swap.unverified(pi.SessionManager, "1.6.1")).toBe(
      "pi 1.6.1 is not a version this SessionManager was verified against (1.6.0)",
    );
    expect(swap.unverified(class SessionManager {}, "1.6.0")).toBe(
      "pi 1.6.0's SessionManager is not the one this package was verified against (a modified pi?)",
    );
    expect(swap.unverified(undefined, "1.6.0")).toBe("pi 1.6.0 exports no SessionManager class");
    expect(swap.unverifiedVersion("1.6.0")).toBeNull();
    expect(swap.unverifiedVersion("1.6.0-beta.1")).not.toBeNull();
  });

  it("tells our own class apart", () => {
    expect(swap.isOurs(ours)).toBe(true);
    expect(swap.isOurs(pi.SessionManager)).toBe(false);
  });
});

describe("the mode", () => {
  const dir = mkdtempSync(join(tmpdir(), "psn-swap-"));
  const settings = (v) => writeFileSync(join(dir, "settings.json"), JSON.stringify(v));
  it("comes from the environment, then settings.json, then the channel's default", () => {
    settings({});
    expect(swap.chooseMode("lists", { env: {}, dir })).toEqual({ mode: "lists", from: "default" });
    settings({ piSessionNative: { swap: "all" } });
    expect(swap.chooseMode("lists", { env: {}, dir })).toEqual({
      mode: "all",
      from: `piSessionNative.swap in ${join(dir, "settings.json")}`,
    });
    expect(swap.chooseMode("lists", { env: { PI_SESSION_NATIVE_SWAP: "off" }, dir })).toEqual({
      mode: "off",
      from: "PI_SESSION_NATIVE_SWAP",
    });
    expect(swap.chooseMode("all", { env: {}, dir: join(dir, "missing") })).toEqual({ mode: "all", from: "default" });
  });
  it("refuses a value that is not a mode", () => {
    expect(swap.chooseMode("lists", { env: { PI_SESSION_NATIVE_SWAP: "yes" }, dir }).error).toBe(
      'PI_SESSION_NATIVE_SWAP is "yes", not one of off, lists, all',
    );
    settings({ piSessionNative: { swap: 1 } });
    expect(swap.chooseMode("lists", { env: {}, dir }).error).toMatch(/^piSessionNative\.swap in .* is 1, not one of/);
  });
  it("finds pi's agent dir as pi does", () => {
    expect(swap.agentDir({ PI_CODING_AGENT_DIR: "/x/agent" })).toBe("/x/agent");
    expect(swap.agentDir({})).toMatch(/[/\\]\.pi[/\\]agent$/);
  });
});

describe("install", () => {
  /** A stand-in for pi's class: its own statics, so pi's module stays untouched. */
  const piLike = () => {
    const c = class SessionManager {};
    for (const name of swap.ALL) c[name] = () => `pi's ${name}`;
    return c;
  };
  afterEach(() => {
    delete globalThis[PARTIAL];
  });

  it("swaps the statics of the mode, once", () => {
    const c = piLike();
    const first = swap.install(c, ours, "lists", "test");
    expect(first.now).toBe(true);
    expect(c.list).toBe(ours.list);
    expect(c.listAll).toBe(ours.listAll);
    expect(c.open()).toBe("pi's open");
    expect(globalThis[PARTIAL]).toBe("time");
    const again = swap.install(c, ours, "all", "other");
    expect(again).toEqual({ swapped: first.swapped, now: false });
    expect(c.open()).toBe("pi's open");
    expect(swap.swapped(c)).toMatchObject({ mode: "lists", names: ["list", "listAll"], by: "test" });
  });

  it("all: every static; uninstall puts pi's back", () => {
    const c = piLike();
    swap.install(c, ours, "all", "test");
    for (const name of swap.ALL) expect(c[name]).toBe(ours[name]);
    expect(Object.keys(c)).toEqual([]); // non-enumerable, as class statics are
    expect(swap.uninstall(c)).toBe(true);
    for (const name of swap.ALL) expect(c[name]()).toBe(`pi's ${name}`);
    expect(swap.swapped(c)).toBeNull();
    expect(swap.uninstall(c)).toBe(false);
  });

  it("off: nothing", () => {
    const c = piLike();
    swap.install(c, ours, "off", "test");
    for (const name of swap.ALL) expect(c[name]()).toBe(`pi's ${name}`);
    expect(globalThis[PARTIAL]).toBeUndefined();
  });
});
