"use strict";
// Which pi release's behaviour this package reproduces: a profile is the few switches where the
// session modules of the releases in pi/verified.json differ (docs/pi.md). Chosen by, in order:
// PI_SESSION_NATIVE_PI=<pi version>; in pi, the gate (use()); the pi installed beside this package;
// the newest.

const { existsSync, readFileSync } = require("node:fs");
const { join } = require("node:path");

const ENV = "PI_SESSION_NATIVE_PI";
const PI_PACKAGE = "@earendil-works/pi-coding-agent";
const PI_MODULE = join("dist", "core", "session-manager.js");

/** The switches of each profile, oldest first. */
// biome-ignore format: the keys are version strings ("1.5" unquoted would be the number 1.5)
const PROFILES = {
  "1.0": { exportsProjectContextEntry: false, pathsEqual: false },
  "1.5": { exportsProjectContextEntry: true, pathsEqual: true },
  "1.6": { exportsProjectContextEntry: true, pathsEqual: true },
};
const NEWEST = Object.keys(PROFILES).at(-1);

/** The verified table (pi/verified.json, or PI_SESSION_NATIVE_TABLE as pi/gate.js reads it): [{ pi, profile, ... }]. */
const RELEASES = (
  process.env.PI_SESSION_NATIVE_TABLE
    ? JSON.parse(readFileSync(process.env.PI_SESSION_NATIVE_TABLE, "utf8"))
    : require("../pi/verified.json")
).releases;

/** [major, minor, patch] of a version string "1.6.0" / "1.6.0-beta.1", or null. */
function parseVersion(version) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(String(version).trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

function compareVersions(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/**
 * The profile for pi `version`: that release's row, else the newest release before it, else the
 * oldest profile (`rows`: the table's, or another table's). Throws for a string that is not a version.
 */
function forVersion(version, from = "pi's version", rows = RELEASES) {
  const v = parseVersion(version);
  if (!v) throw new Error(`pi-session-native: ${from} is ${JSON.stringify(version)}, not a pi version such as "1.6.0"`);
  let best = null;
  for (const row of rows) {
    const r = parseVersion(row.pi);
    if (compareVersions(r, v) <= 0 && (!best || compareVersions(r, best.v) > 0)) best = { v: r, row };
  }
  return best ? best.row.profile : Object.keys(PROFILES)[0];
}

/** The directory of the pi installed beside this package, as require() would find it, or null. */
function findPi() {
  for (const dir of require.resolve.paths(PI_PACKAGE) ?? []) {
    const root = join(dir, PI_PACKAGE);
    if (existsSync(join(root, PI_MODULE)) && existsSync(join(root, "package.json"))) return root;
  }
  return null;
}

/** The version of the pi installed beside this package, or null. */
function installedPiVersion() {
  const dir = findPi();
  try {
    return dir && (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version ?? null);
  } catch {
    return null;
  }
}

let chosen = null; // { name, switches, by }

function choose() {
  const pinned = process.env[ENV];
  if (pinned) return { name: forVersion(pinned, ENV), by: ENV };
  const installed = installedPiVersion();
  if (installed && parseVersion(installed)) return { name: forVersion(installed), by: `pi ${installed} installed` };
  return { name: NEWEST, by: "newest" };
}

/** The profile in force: { name, switches, by }. */
function current() {
  if (!chosen) {
    const { name, by } = choose();
    chosen = { name, switches: PROFILES[name], by };
  }
  return chosen;
}

/** One switch of the profile in force. */
const has = (switchName) => current().switches[switchName] === true;

/**
 * Use profile `name` (the gate: the profile of the module pi runs). PI_SESSION_NATIVE_PI still wins.
 * Returns the profile in force.
 */
function use(name, by) {
  if (!Object.hasOwn(PROFILES, name)) throw new Error(`pi-session-native: no profile ${JSON.stringify(name)}`);
  if (!process.env[ENV]) chosen = { name, switches: PROFILES[name], by };
  return current();
}

module.exports = { ENV, PI_MODULE, PI_PACKAGE, PROFILES, current, findPi, forVersion, has, parseVersion, use };
