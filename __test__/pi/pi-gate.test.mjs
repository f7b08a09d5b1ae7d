// pi/gate.js and pi/swap.js: whether pi may run on our SessionManager (the fingerprint of the session
// module pi runs, against pi/verified.json) and the swap of pi's SessionManager statics (the pi
// package's extension, pi-native). The flows inside pi are __test__/pi/package.mjs and run.mjs; these
// are the rules on their own. The synthetic next releases come from scripts/pi-variants.mjs.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { nodeBinary, REPO } from "../../scripts/node-bin.mjs";
import { devPiVariant } from "../../scripts/pi-variants.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const require = createRequire(import.meta.url);
const swap = require("../../pi/swap.js");
const gate = require("../../pi/gate.js");
const fingerprint = require("../../pi/fingerprint.js");
const ours = require("../../index.js").SessionManager;
const PI_DIR = join(REPO, "node_modules/@earendil-works/pi-coding-agent");
const pi = await import(pathToFileURL(join(PI_DIR, "dist/core/session-manager.js")).href);
const PARTIAL = Symbol.for("pi-session-native.partialLists");
const REFUSED =
  /^pi 1\.6\.1's session module \((its bundle|dist\/core\/session-manager\.js)\) is not one this package was verified against \(verified: pi 1\.0\.3, 1\.3\.0, 1\.4\.0, 1\.5\.0, 1\.5\.2, 1\.6\.0\); update pi-session-native .*PI_SESSION_NATIVE_SWAP=off/;

/** The synthetic next releases of pi 1.6.0, labelled 1.6.1, where pi's dependencies resolve. */
const variant = (kind) => devPiVariant(`gate-${kind}`, kind, "1.6.1");

const dirs = {};
beforeAll(() => {
  for (const kind of ["rebundled", "class", "listing"]) dirs[kind] = variant(kind);
}, 120_000);

describe("the fingerprint", () => {
  const text = readFileSync(join(PI_DIR, "dist/core/session-manager.js"), "utf8");
  it("ignores what a bundler renumbers (the numeric suffixes of identifiers)", () => {
    expect(text).toMatch(/\bstream\b/);
    const renumbered = text.replace(/\b(stream|entries|filePath)\b/g, "$12");
    expect(renumbered).not.toBe(text);
    expect(fingerprint.ofModuleText(renumbered)).toBe(fingerprint.ofModuleText(text));
  });
  it("sees a change inside a quoted string, or of a number", () => {
    expect(text.split('"utf8"').length).toBeGreaterThan(1);
    expect(fingerprint.ofModuleText(text.replace('"utf8"', '"utf16le"'))).not.toBe(fingerprint.ofModuleText(text));
    expect(fingerprint.ofModuleText(text.replace('"utf8"', '"utf9"'))).not.toBe(fingerprint.ofModuleText(text));
    const n = /CURRENT_SESSION_VERSION = (\d+)/.exec(text);
    expect(n).not.toBeNull();
    expect(fingerprint.ofModuleText(text.replace(n[0], `CURRENT_SESSION_VERSION = ${Number(n[1]) + 1}`))).not.toBe(
      fingerprint.ofModuleText(text),
    );
  });
});

describe("the gate, on the unbundled module (pi-session-native/register's form)", () => {
  it("passes pi 1.6.0 and its re-bundled copy, in profile 1.6", () => {
    expect(gate.checkModule(PI_DIR, "1.6.0")).toMatchObject({ ok: true, profile: "1.6", form: "module" });
    expect(gate.checkModule(dirs.rebundled, "1.6.1")).toMatchObject({ ok: true, profile: "1.6" });
    expect(gate.checkClass(PI_DIR, pi.SessionManager, "1.6.0")).toMatchObject({
      ok: true,
      profile: "1.6",
      form: "module",
    });
  });

  it("refuses a one-line change in the class or in buildSessionInfo, naming pi's version and the remedy", async () => {
    expect(gate.checkModule(dirs.class, "1.6.1").why).toMatch(REFUSED);
    expect(gate.checkModule(dirs.listing, "1.6.1").why).toMatch(REFUSED);
    const changed = await import(pathToFileURL(join(dirs.class, "dist/core/session-manager.js")).href);
    expect(gate.checkClass(dirs.class, changed.SessionManager, "1.6.1").why).toMatch(REFUSED);
  });

  it("refuses what is not pi's class", () => {
    expect(gate.checkClass(PI_DIR, class SessionManager {}, "1.6.0").ok).toBe(false);
    expect(gate.checkClass(PI_DIR, undefined, "1.6.0").why).toBe("pi 1.6.0 exports no SessionManager class");
    expect(gate.checkClass(null, pi.SessionManager, "1.6.0").ok).toBe(false);
  });

  it("tells our own class apart", () => {
    expect(swap.isOurs(ours)).toBe(true);
    expect(swap.isOurs(pi.SessionManager)).toBe(false);
  });
});

// pi's bundle imports node:fs's globSync (Node >= 22.19): scripts/pi-verdict.mjs runs on scripts/node-bin.mjs's
// Node 22, a Linux binary, which node.exe under wine (npm run test:win32) cannot start.
describe.skipIf(process.platform === "win32")(
  "the gate, on pi's bundle (the pi package's and pi-native's form)",
  () => {
    let verdict; // dir -> scripts/pi-verdict.mjs's line (both forms)
    beforeAll(() => {
      const node22 = nodeBinary(22, { minMinor: 19 });
      const all = [PI_DIR, dirs.rebundled, dirs.class, dirs.listing];
      const r = spawnSync(node22, [join(REPO, "scripts/pi-verdict.mjs"), ...all], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`pi-verdict.mjs: ${r.stderr}`);
      verdict = Object.fromEntries(
        r.stdout
          .trim()
          .split("\n")
          .map((l) => [JSON.parse(l).dir, JSON.parse(l)]),
      );
    }, 120_000);

    it("passes pi 1.6.0 in both forms, in profile 1.6", () => {
      expect(verdict[PI_DIR].bundle).toMatchObject({ ok: true, profile: "1.6", form: "bundle" });
      expect(verdict[PI_DIR].module).toMatchObject({ ok: true, profile: "1.6" });
    });

    it("passes a re-bundled, relabelled 1.6.0 (renumbered locals, renamed chunk): the same fingerprint", () => {
      const v = verdict[dirs.rebundled];
      expect(v.version).toBe("1.6.1");
      expect(v.bundle).toMatchObject({ ok: true, profile: "1.6", form: "bundle" });
      expect(v.bundle.fingerprint).toBe(verdict[PI_DIR].bundle.fingerprint);
      expect(v.module).toMatchObject({ ok: true, profile: "1.6" });
    });

    it("refuses a one-line change in the class, in both forms, naming pi's version and the remedy", () => {
      const v = verdict[dirs.class];
      expect(v.bundle.ok).toBe(false);
      expect(v.bundle.why).toMatch(REFUSED);
      expect(v.module.ok).toBe(false);
      expect(v.module.why).toMatch(REFUSED);
    });

    it("refuses a one-line change in buildSessionInfo (outside the class), in both forms", () => {
      const v = verdict[dirs.listing];
      expect(v.bundle).toMatchObject({ ok: false });
      expect(v.bundle.why).toMatch(REFUSED);
      expect(v.module.why).toMatch(REFUSED);
    });
  },
);

describe("the mode", () => {
  const dir = makeTempRoot("swap");
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
    // a native absolute path (pi's normalizePath turns an MSYS-style /x/agent into X:\agent on Windows)
    const dir = join(tmpdir(), "agent");
    expect(swap.agentDir({ PI_CODING_AGENT_DIR: dir })).toBe(dir);
    expect(swap.agentDir({ PI_CODING_AGENT_DIR: "~" })).toBe(homedir());
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
    const first = swap.install(c, () => ours, "lists", "test");
    expect(first.now).toBe(true);
    expect(c.list).toBe(ours.list);
    expect(c.listAll).toBe(ours.listAll);
    expect(c.open()).toBe("pi's open");
    expect(typeof globalThis[PARTIAL]).toBe("function");
    const again = swap.install(c, () => ours, "all", "other");
    expect(again).toEqual({ swapped: first.swapped, now: false });
    expect(c.open()).toBe("pi's open");
    expect(swap.swapped(c)).toMatchObject({ mode: "lists", names: ["list", "listAll"], by: "test" });
  });

  it("all: every static; uninstall puts pi's back", () => {
    const c = piLike();
    swap.install(c, () => ours, "all", "test");
    for (const name of swap.ALL) expect(c[name]).toBe(ours[name]);
    expect(Object.keys(c)).toEqual([]); // non-enumerable, as class statics are
    expect(swap.uninstall(c)).toBe(true);
    for (const name of swap.ALL) expect(c[name]()).toBe(`pi's ${name}`);
    expect(swap.swapped(c)).toBeNull();
    expect(swap.uninstall(c)).toBe(false);
  });

  it("partial lists: PI_SESSION_NATIVE_PARTIAL_LISTS=files keeps pi's cadence; the deprecated PI_NATIVE_ name still works, the new one wins", () => {
    const cases = [
      [{ PI_SESSION_NATIVE_PARTIAL_LISTS: "files" }, "undefined"],
      [{ PI_NATIVE_PARTIAL_LISTS: "files" }, "undefined"],
      [{ PI_SESSION_NATIVE_PARTIAL_LISTS: "time", PI_NATIVE_PARTIAL_LISTS: "files" }, "function"],
      [{}, "function"],
    ];
    const saved = { ...process.env };
    try {
      for (const [env, expected] of cases) {
        delete process.env.PI_SESSION_NATIVE_PARTIAL_LISTS;
        delete process.env.PI_NATIVE_PARTIAL_LISTS;
        Object.assign(process.env, env);
        delete globalThis[PARTIAL];
        swap.install(piLike(), () => ours, "lists", "test");
        expect([env, typeof globalThis[PARTIAL]]).toEqual([env, expected]);
      }
    } finally {
      for (const k of ["PI_SESSION_NATIVE_PARTIAL_LISTS", "PI_NATIVE_PARTIAL_LISTS"]) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });

  it("off: nothing", () => {
    const c = piLike();
    swap.install(c, () => ours, "off", "test");
    for (const name of swap.ALL) expect(c[name]()).toBe(`pi's ${name}`);
    expect(globalThis[PARTIAL]).toBeUndefined();
  });
});
