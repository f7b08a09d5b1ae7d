"use strict";
// Which implementation `require("pi-session-native")` gets: ours when the native binding loads;
// else pi's own `core/session-manager` module, with one warning (PI_SESSION_NATIVE_NO_FALLBACK=1
// makes it an error); with no pi either, or a Node that cannot require() ESM, one short error.

const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const profile = require("./profile.js");

const { PI_MODULE, PI_PACKAGE, findPi } = profile;
const NO_FALLBACK = "PI_SESSION_NATIVE_NO_FALLBACK";
/** The platform package (npm/<name>/) of each Rust target in package.json's `napi.targets`, as napi-rs names it. */
const PLATFORM_OF_TARGET = Object.fromEntries(
  require("../package.json").napi.targets.map((target) => {
    const [arch, , os, abi] = target.split("-");
    const name = `${os === "windows" ? "win32" : os}-${{ x86_64: "x64", aarch64: "arm64" }[arch]}`;
    return [target, abi ? `${name}-${abi}` : name];
  }),
);
const PLATFORMS = Object.values(PLATFORM_OF_TARGET).sort();

let loadFailure; // undefined: not tried yet; null: the binding loads

/** Null when the native binding loads, else the error its loader threw. */
function bindingError() {
  if (loadFailure === undefined) {
    try {
      require("../binding.js");
      loadFailure = null;
    } catch (err) {
      loadFailure = err;
    }
  }
  return loadFailure;
}

/** { shown: "linux-x64 (glibc)", name: "linux-x64-gnu" }: this platform, and its package's name. */
function platform() {
  const { platform: os, arch } = process;
  if (os === "linux") {
    const glibc = Boolean(process.report?.getReport?.().header?.glibcVersionRuntime);
    return { shown: `linux-${arch} (${glibc ? "glibc" : "musl"})`, name: `linux-${arch}-${glibc ? "gnu" : "musl"}` };
  }
  return { shown: `${os}-${arch}`, name: os === "win32" ? `win32-${arch}-msvc` : `${os}-${arch}` };
}

/** Why no binding loaded, in one clause: "no native binary loads on linux-x64 (glibc) (…)". */
function whatIsMissing(err = bindingError()) {
  const p = platform();
  if (!PLATFORMS.includes(p.name)) return `there is no prebuilt binary for ${p.shown}`;
  // The napi loader chains an error per place it looked (`cause`): one that loads badly says most.
  let why = `pi-session-native-${p.name} is not installed`;
  for (let e = err; e; e = e.cause) {
    const first = String(e.message ?? e).split("\n")[0];
    if (!/^(Cannot find (module|native binding)|Failed to load native binding)/.test(first)) {
      why = `its binary does not load: ${first.slice(0, 300)}`;
      break;
    }
  }
  return `no native binary loads on ${p.shown} (${why})`;
}

const REINSTALL =
  "reinstall with optional dependencies (without --omit=optional; delete node_modules and package-lock.json first if they came from another platform)";

function shortError(message, err) {
  const out = new Error(`pi-session-native: ${message}`);
  out.code = "PI_SESSION_NATIVE_NO_BINARY";
  // For debugging, and out of the way of the printed error: the napi loader's own error.
  Object.defineProperty(out, "bindingError", { value: err, enumerable: false, configurable: true });
  return out;
}

/** Whether PI_SESSION_NATIVE_NO_FALLBACK asks for an error instead of pi's own SessionManager. */
function noFallback(env = process.env) {
  const flag = env[NO_FALLBACK];
  return Boolean(flag) && flag !== "0";
}

/** pi's own module, with one warning; or a short error saying what is missing and how to fix it. */
function fallback(err) {
  const missing = whatIsMissing(err);
  const fix = PLATFORMS.includes(platform().name) ? REINSTALL : "build the addon from source (docs/install.md)";
  if (noFallback()) {
    throw shortError(
      `${missing}. To fix it, ${fix}. (${NO_FALLBACK} is set, so pi's own SessionManager is not used instead.)`,
      err,
    );
  }
  const piDir = findPi();
  if (!piDir) {
    throw shortError(
      `${missing}, and ${PI_PACKAGE} is not installed to fall back on. To fix it, ${fix}, or install ${PI_PACKAGE} to run on pi's own SessionManager.`,
      err,
    );
  }
  let pi;
  try {
    pi = require(join(piDir, PI_MODULE));
  } catch (e) {
    const why =
      e?.code === "ERR_REQUIRE_ESM"
        ? `it is an ES module, and this Node (${process.versions.node}) does not require() ES modules (on by default from Node 20.19 and 22.12)`
        : String(e?.message ?? e)
            .split("\n")[0]
            .replace(/\.+$/, "");
    throw shortError(
      `${missing}, and pi's own SessionManager (${join(piDir, PI_MODULE)}) does not load either: ${why}. To fix it, ${fix}.`,
      err,
    );
  }
  const version = JSON.parse(readFileSync(join(piDir, "package.json"), "utf8")).version;
  const warned = Symbol.for("pi-session-native.fallback-warned");
  if (!process[warned]) {
    process[warned] = true;
    process.emitWarning(
      `pi-session-native: ${missing}; using pi's own SessionManager (${PI_PACKAGE} ${version}) instead: the same API and session files, ` +
        "without this package's data safety (torn-line repair, no torn lines from failed appends, atomic rewrites with backups, " +
        `appends from two processes), bounded memory or speed. To get them, ${fix}; ${NO_FALLBACK}=1 makes this an error.`,
      { code: "PI_SESSION_NATIVE_FALLBACK" },
    );
  }
  return pi;
}

let exported;

/** Our exports: those of the pi release in force (profile.js), decided when first asked. */
function ours() {
  if (exported) return exported;
  const { SessionManager } = require("./session-manager.js");
  const context = require("./context.js");
  const file = require("./persistence.js");
  const listing = require("./listing.js");
  exported = {
    CURRENT_SESSION_VERSION: file.CURRENT_SESSION_VERSION,
    SessionManager,
    assertValidSessionId: file.assertValidSessionId,
    buildContextEntries: context.buildContextEntries,
    buildSessionContext: context.buildSessionContext,
    buildSessionProjection: context.buildSessionProjection,
    findMostRecentSession: listing.findMostRecentSession,
    getDefaultSessionDir: require("./paths.js").getDefaultSessionDir,
    getLatestCompactionEntry: context.getLatestCompactionEntry,
    loadEntriesFromFile: file.loadEntriesFromFile,
    migrateSessionEntries: file.migrateSessionEntries,
    parseSessionEntries: file.parseSessionEntries,
    projectContextEntry: context.projectContextEntry,
    sessionEntryToContextMessages: context.sessionEntryToContextMessages,
  };
  if (!profile.has("exportsProjectContextEntry")) delete exported.projectContextEntry;
  return exported;
}

/** The package's exports: ours on the native binding, else pi's own. */
function load() {
  const err = bindingError();
  return err ? fallback(err) : ours();
}

module.exports = {
  load,
  bindingError,
  noFallback,
  platform,
  whatIsMissing,
  NO_FALLBACK,
  PLATFORMS,
  PLATFORM_OF_TARGET,
};
