"use strict";
// The gate: whether pi may run on our SessionManager, decided by the content of the session module
// pi runs, not by pi's version string. pi/verified.json lists the releases our differential suites
// pass against, each with the fingerprint of its module in both forms (pi/fingerprint.js) and the
// behaviour profile our library uses for it (lib/profile.js). A module whose fingerprint is in the
// table passes whatever pi's version says (a new pi release that did not touch its session module
// is switched on the day it ships); any other module is refused with one notice that names pi's
// version and what the user can do.
//
// Callers: the pi package's extension (pi/extension.mjs) and pi-native (pi/launcher.js) check the
// class pi runs (bundle or unbundled); the resolve hook of `pi-session-native/register`
// (pi/resolve-hook.js) checks dist/core/session-manager.js before pi loads it.

const { existsSync, readFileSync } = require("node:fs");
const { dirname, join } = require("node:path");
const fingerprint = require("./fingerprint.js");

const PI_PACKAGE = "@earendil-works/pi-coding-agent";
/**
 * The table: pi/verified.json, or PI_SESSION_NATIVE_TABLE=<file> (verify:pi runs pi's CLI tests on a
 * candidate release with a copy of the table that has its row, so the gate lets ours run on it).
 */
const TABLE = process.env.PI_SESSION_NATIVE_TABLE || join(__dirname, "verified.json");

let table;
/** The verified releases: [{ pi, profile, module, bundle, verified }]. */
function releases() {
  table ??= JSON.parse(readFileSync(TABLE, "utf8")).releases;
  return table;
}

/** "1.0.3, 1.3.0, ..., 1.6.0": the releases in the table, for messages. */
const releaseList = () =>
  releases()
    .map((r) => r.pi)
    .join(", ");

/** The row whose `form` fingerprint is `print`: the same pi version first, else the newest such row. */
function rowFor(form, print, version) {
  const rows = releases().filter((r) => r[form] === print);
  return rows.find((r) => r.pi === version) ?? rows.at(-1) ?? null;
}

/** What the user can do about a refused module: one sentence. */
const REMEDY =
  "update pi-session-native (a release that verified this pi lists it in pi/verified.json), or set PI_SESSION_NATIVE_SWAP=off to silence this";

/** Why a module was refused, as one clause naming pi's version. */
function refusal(version, form) {
  return (
    `pi ${version}'s session module (${form === "bundle" ? "its bundle" : "dist/core/session-manager.js"}) is not one this package was verified against ` +
    `(verified: pi ${releaseList()}); ${REMEDY}`
  );
}

/**
 * The verdict for pi at `piDir` (version `version`) running class `cls`:
 * { ok: true, profile, row, form, fingerprint } or { ok: false, why }.
 */
function checkClass(piDir, cls, version) {
  if (typeof cls !== "function") return { ok: false, why: `pi ${version} exports no SessionManager class` };
  if (!piDir) return { ok: false, why: `cannot find pi ${version}'s package directory to check its session module` };
  let found;
  try {
    found = fingerprint.ofInstalledClass(piDir, cls);
  } catch (e) {
    return { ok: false, why: `cannot read pi ${version}'s session module (${String(e?.message ?? e).split("\n")[0]})` };
  }
  if (!found) return { ok: false, why: refusal(version, "bundle") };
  const row = rowFor(found.form, found.fingerprint, version);
  if (!row) return { ok: false, why: refusal(version, found.form), ...found };
  if (found.also && !rowFor(found.also.form, found.also.fingerprint, version))
    return { ok: false, why: refusal(version, found.also.form), ...found };
  return { ok: true, profile: row.profile, row, ...found };
}

/** The verdict for the unbundled module at `piDir` (the register hook's case, before pi loads it). */
function checkModule(piDir, version) {
  const print = fingerprint.ofModuleAt(piDir);
  if (!print) return { ok: false, why: `pi ${version} has no readable ${fingerprint.MODULE_FILE}` };
  const row = rowFor("module", print, version);
  if (!row) return { ok: false, why: refusal(version, "module"), form: "module", fingerprint: print };
  return { ok: true, profile: row.profile, row, form: "module", fingerprint: print };
}

/** pi's package.json at `piDir`, or null. */
function readPiPackage(piDir) {
  try {
    const pkg = JSON.parse(readFileSync(join(piDir, "package.json"), "utf8"));
    return pkg && pkg.name === PI_PACKAGE ? pkg : null;
  } catch {
    return null;
  }
}

/** pi's package directory from a file inside it (pi's cli.js in process.argv[1]), or null. */
function piDirAbove(file) {
  if (!file) return null;
  let dir = dirname(file);
  for (;;) {
    if (existsSync(join(dir, "package.json")) && readPiPackage(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

module.exports = { PI_PACKAGE, REMEDY, checkClass, checkModule, piDirAbove, readPiPackage, releaseList, releases };
