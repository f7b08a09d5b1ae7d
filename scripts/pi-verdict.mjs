// `node scripts/pi-verdict.mjs <pi package dir> [...]`: the gate's verdict (pi/gate.js) on each pi,
// in both forms, as one JSON line per pi:
//   { dir, version, bundle: { ok, profile?, fingerprint?, why? }, module: { ok, profile?, fingerprint?, why? } }
// "bundle" is the class pi's `pi` bin runs (dist/bundle/index.js's SessionManager: the pi package's
// extension and pi-native check it), "module" is dist/core/session-manager.js (the register hook's).
// pi's bundle needs Node >= 22.19 (it imports node:fs's globSync), so callers on an older Node run
// this file with scripts/node-bin.mjs's Node 22. Used by verify:pi and __test__/pi/pi-gate.test.mjs.

import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const gate = require("../pi/gate.js");
const fingerprint = require("../pi/fingerprint.js");

/** The gate's verdict on both forms of the pi package at `dir`. */
export async function verdicts(dir) {
  const piDir = resolve(dir);
  const pkg = gate.readPiPackage(piDir);
  if (!pkg) throw new Error(`${piDir} is not a ${gate.PI_PACKAGE} package directory`);
  const version = String(pkg.version);
  const brief = (v) => ({
    ok: v.ok,
    ...(v.profile ? { profile: v.profile } : {}),
    ...(v.fingerprint ? { fingerprint: v.fingerprint } : {}),
    ...(v.why ? { why: v.why } : {}),
  });
  let bundle;
  try {
    const mod = await import(pathToFileURL(join(piDir, "dist", "bundle", "index.js")).href);
    const found = fingerprint.ofInstalledClass(piDir, mod.SessionManager);
    bundle = { ...brief(gate.checkClass(piDir, mod.SessionManager, version)), form: found?.form ?? null };
    if (found) bundle.fingerprint = found.fingerprint;
  } catch (e) {
    bundle = { ok: false, why: `cannot import its bundle: ${String(e?.message ?? e).split("\n")[0]}` };
  }
  const module = brief(gate.checkModule(piDir, version));
  module.fingerprint ??= fingerprint.ofModuleAt(piDir) ?? undefined;
  return { dir: piDir, version, bundle, module };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const dirs = process.argv.slice(2);
  if (dirs.length === 0) {
    process.stderr.write("usage: node scripts/pi-verdict.mjs <pi package dir> [...]\n");
    process.exit(2);
  }
  for (const dir of dirs) process.stdout.write(`${JSON.stringify(await verdicts(dir))}\n`);
}
