// Where no native binary loads (a platform without one, an install without its platform package, a
// binary that does not load), `require("pi-session-native")` gives pi's own SessionManager with one
// warning, or one short error (lib/load.js). Each case runs a child Node on a copy of the package's
// files without any .node file, in a temp dir whose node_modules has pi (a symlink to the
// devDependency) or not.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { nodeBinary, REPO } from "../../scripts/node-bin.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const require = createRequire(import.meta.url);
const PI_DIR = join(REPO, "node_modules/@earendil-works/pi-coding-agent");
const OUR_EXPORTS = Object.keys(require("../../index.js")).sort();
const NAPI_TRACE = /Cannot find native binding|npm has a bug/;

/** A project dir with the package's shipped files (package.json `files`) minus every .node; pi linked in or not. */
function project(label, { withPi, keepNode = false }) {
  const root = makeTempRoot(`fallback-${label}`);
  const pkg = join(root, "node_modules/pi-session-native");
  mkdirSync(pkg, { recursive: true });
  const { files } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
  for (const f of ["package.json", ...files]) {
    if (f === "*.node" && keepNode) {
      for (const n of readdirSync(REPO).filter((n) => n.endsWith(".node"))) cpSync(join(REPO, n), join(pkg, n));
    }
    if (f.includes("*") || !existsSync(join(REPO, f))) continue;
    cpSync(join(REPO, f), join(pkg, f), { recursive: true, filter: (src) => keepNode || !src.endsWith(".node") });
  }
  // A junction on Windows: a directory symlink there needs a privilege; elsewhere the type is ignored.
  if (withPi)
    symlinkSync(join(REPO, "node_modules/@earendil-works"), join(root, "node_modules/@earendil-works"), "junction");
  return { root, pkg };
}

function env(extra = {}) {
  const out = { ...process.env, ...extra };
  for (const k of ["NAPI_RS_NATIVE_LIBRARY_PATH", "NODE_PATH", "NODE_OPTIONS", "PI_SESSION_NATIVE_NO_FALLBACK"])
    if (!(k in extra)) delete out[k];
  return out;
}

/** Runs `code` (CommonJS) in a child Node in `cwd`; returns { status, stdout, stderr, out (stdout's JSON) }. */
function run(cwd, code, { node = process.execPath, args = [], extraEnv = {} } = {}) {
  const r = spawnSync(node, [...args, "-e", code], { cwd, env: env(extraEnv), encoding: "utf8", timeout: 60_000 });
  let out;
  try {
    out = JSON.parse(r.stdout);
  } catch {
    out = undefined;
  }
  return { ...r, out };
}

// CommonJS and ESM entries in one process; a session through whatever they export.
const USE_BOTH = `
const warnings = [];
process.on("warning", (w) => warnings.push({ code: w.code, message: w.message }));
const cjs = require("pi-session-native");
import("pi-session-native").then((esm) => {
  const dir = require("node:fs").mkdtempSync(require("node:path").join(process.env.PI_CODING_AGENT_DIR || require("node:os").tmpdir(), "pi-fb-"));
  const sm = cjs.SessionManager.create("/project", dir);
  sm.appendMessage({ role: "user", content: "hello", timestamp: 1 });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], api: "a", provider: "p", model: "m", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 });
  const again = esm.SessionManager.open(sm.getSessionFile(), dir);
  const piClass = require(${JSON.stringify(join(PI_DIR, "dist/core/session-manager.js"))}).SessionManager;
  setImmediate(() => console.log(JSON.stringify({
    keys: Object.keys(cjs).sort(),
    esmKeys: Object.keys(esm).filter((k) => k !== "default").sort(),
    isPis: cjs.SessionManager === piClass && esm.SessionManager === piClass,
    entries: again.getEntries().length,
    warnings,
  })));
});
`;

describe("no native binary, pi installed", () => {
  let p;
  beforeAll(() => {
    p = project("pi", { withPi: true });
  });

  it("falls back to pi's own module, same export names as ours, one warning for CJS + ESM", () => {
    const r = run(p.root, USE_BOTH);
    expect(r.status, r.stderr).toBe(0);
    expect(r.out.isPis).toBe(true);
    expect(r.out.keys).toEqual(OUR_EXPORTS);
    expect(r.out.esmKeys).toEqual(OUR_EXPORTS);
    expect(r.out.entries).toBe(2);
    expect(r.out.warnings.map((w) => w.code)).toEqual(["PI_SESSION_NATIVE_FALLBACK"]);
    const [w] = r.out.warnings;
    expect(w.message).toContain(`${process.platform}-${process.arch}`);
    expect(w.message).toMatch(/pi-session-native-[a-z0-9-]+ is not installed/);
    expect(w.message).toMatch(/data safety.*torn-line repair.*speed/);
    expect(w.message).toContain("PI_SESSION_NATIVE_NO_FALLBACK=1");
    expect(r.stderr).not.toMatch(NAPI_TRACE);
  });

  it("PI_SESSION_NATIVE_NO_FALLBACK=1 makes it one short error, no warning", () => {
    const r = run(p.root, 'require("pi-session-native")', { extraEnv: { PI_SESSION_NATIVE_NO_FALLBACK: "1" } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("code: 'PI_SESSION_NATIVE_NO_BINARY'");
    expect(r.stderr).toMatch(/Error: pi-session-native: no native binary loads on [a-z0-9]+-[a-z0-9]+/);
    expect(r.stderr).toMatch(/reinstall with optional dependencies/);
    expect(r.stderr).toContain("PI_SESSION_NATIVE_NO_FALLBACK is set");
    expect(r.stderr).not.toContain("PI_SESSION_NATIVE_FALLBACK]");
    expect(r.stderr).not.toMatch(NAPI_TRACE);
  });

  it("a binary that is there but does not load is named in the warning", () => {
    const q = project("broken", { withPi: true });
    const { name } = require("../../lib/load.js").platform();
    writeFileSync(join(q.pkg, `pi-session-native.${name}.node`), "not a shared object");
    const r = run(q.root, USE_BOTH);
    expect(r.status, r.stderr).toBe(0);
    expect(r.out.isPis).toBe(true);
    expect(r.out.warnings).toHaveLength(1);
    expect(r.out.warnings[0].message).toContain(
      `its binary does not load: ${join(q.pkg, `pi-session-native.${name}.node`)}`,
    );
  });

  it.runIf(spawnSync(process.execPath, ["--no-experimental-require-module", "-e", ""]).status === 0)(
    "a Node that cannot require() ES modules gets the short error, saying so",
    () => {
      const r = run(p.root, 'require("pi-session-native")', { args: ["--no-experimental-require-module"] });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain("code: 'PI_SESSION_NATIVE_NO_BINARY'");
      expect(r.stderr).toMatch(/it is an ES module, and this Node \([\d.]+\) does not require\(\) ES modules/);
      expect(r.stderr).not.toMatch(NAPI_TRACE);
    },
  );
});

describe("no native binary, no pi", () => {
  it("one short error: platform, expected package, how to fix", () => {
    const p = project("nopi", { withPi: false });
    const r = run(p.root, 'require("pi-session-native")');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("code: 'PI_SESSION_NATIVE_NO_BINARY'");
    expect(r.stderr).toMatch(
      /no native binary loads on [a-z0-9]+-[a-z0-9]+.*pi-session-native-[a-z0-9-]+ is not installed/,
    );
    expect(r.stderr).toContain("@earendil-works/pi-coding-agent is not installed to fall back on");
    expect(r.stderr).toMatch(/reinstall with optional dependencies.*or install @earendil-works\/pi-coding-agent/);
    expect(r.stderr).not.toMatch(NAPI_TRACE);
  });
});

describe("the platform list", () => {
  it("is the npm/<platform> packages", () => {
    const names = readdirSync(join(REPO, "npm")).map(
      (d) => JSON.parse(readFileSync(join(REPO, "npm", d, "package.json"), "utf8")).name,
    );
    expect(
      require("../../lib/load.js")
        .PLATFORMS.map((n) => `pi-session-native-${n}`)
        .sort(),
    ).toEqual(names.sort());
  });

  it("has one package per target in package.json's napi.targets", () => {
    const { napi } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
    expect(Object.keys(require("../../lib/load.js").PLATFORM_OF_TARGET).sort()).toEqual([...napi.targets].sort());
  });
});

describe("pi's CLI with no native binary", () => {
  let p;
  let node22;
  beforeAll(() => {
    p = project("cli", { withPi: true });
    node22 = nodeBinary(22, { minMinor: 19 });
  });
  const piEnv = () => ({ PI_SESSION_NATIVE_PI_DIR: PI_DIR });

  it("pi-native runs pi as it ships, after one line; with PI_SESSION_NATIVE_NO_FALLBACK=1 it exits 2", () => {
    const bin = join(p.pkg, "pi/launcher.js");
    const ok = spawnSync(node22, [bin, "--version"], { cwd: p.root, env: env(piEnv()), encoding: "utf8" });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toBe("1.6.0");
    expect(ok.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^pi-native: no native binary loads on .*; pi runs with its own SessionManager$/),
    ]);
    const strict = spawnSync(node22, [bin, "--version"], {
      cwd: p.root,
      env: env({ ...piEnv(), PI_SESSION_NATIVE_NO_FALLBACK: "1" }),
      encoding: "utf8",
    });
    expect(strict.status).toBe(2);
    expect(strict.stdout).toBe("");
    expect(strict.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^pi-native: no native binary loads on .*, and PI_SESSION_NATIVE_NO_FALLBACK is set$/),
    ]);
  });

  it("--import pi-session-native/register leaves pi's module in place, after one line", () => {
    const code = `import(${JSON.stringify(join(PI_DIR, "dist/core/session-manager.js"))}).then((m) => {
      const sm = m.SessionManager.inMemory("/project");
      sm.appendMessage({ role: "user", content: "x", timestamp: 1 });
      console.log(JSON.stringify({ entries: sm.getEntries().length }));
    });`;
    const r = run(p.root, code, {
      node: node22,
      args: ["--import", pathToFileURL(join(p.pkg, "pi/register.mjs")).href],
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.out).toEqual({ entries: 1 });
    expect(r.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^pi-session-native\/register: no native binary loads on .*; pi runs with its own SessionManager$/,
      ),
    ]);
  });
});
