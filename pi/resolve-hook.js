"use strict";
// The resolve hook behind `pi-session-native/register` and the `pi-native` bin: pi's unbundled CLI
// (`dist/cli.js`) and every module of it import `dist/core/session-manager.js`; the hook points that
// import at our module when the gate passes that module (pi/gate.js: its fingerprint is in
// pi/verified.json), in the profile of the release that matched. For any other pi it prints one line
// to stderr and leaves pi's own module in place.
//
// It uses module.registerHooks() (synchronous, in-thread, Node >= 22.15), not module.register(): the
// latter sends every resolve to a hooks thread and costs about 0.7 s on pi's ~1,000 modules.

const { join } = require("node:path");
const { fileURLToPath, pathToFileURL } = require("node:url");
const gate = require("./gate.js");

const { PI_PACKAGE } = gate;
const TARGET = "/dist/core/session-manager.js";

/** Our ESM module, or the tracing wrapper around it when PI_SESSION_NATIVE_TRACE is set. */
function replacementUrl(env = process.env) {
  const file = env.PI_SESSION_NATIVE_TRACE ? join(__dirname, "trace.mjs") : join(__dirname, "..", "index.mjs");
  return pathToFileURL(file).href;
}

/** { isPi, ok, version, profile?, why? } for the package at `root` (a directory path). */
function checkPi(root) {
  const pkg = gate.readPiPackage(root);
  if (!pkg) return { isPi: false, ok: false };
  const version = String(pkg.version);
  const verdict = gate.checkModule(root, version);
  return { isPi: true, ok: verdict.ok, version, profile: verdict.profile, why: verdict.why };
}

const skipMessage = (why, root) => `pi-session-native: ${why} (${root}); pi runs with its own SessionManager`;

let installed = false;

/**
 * Register the hook (once per thread). Returns false when this Node has no module.registerHooks().
 * `onSkip(message)` is called once per pi package that is left alone (default: one line on stderr).
 */
function install({ onSkip = (m) => process.stderr.write(`${m}\n`), env = process.env } = {}) {
  if (installed) return true;
  const mod = require("node:module");
  if (typeof mod.registerHooks !== "function") return false;
  const ours = replacementUrl(env);
  const decided = new Map(); // pi package root URL -> boolean
  mod.registerHooks({
    resolve(specifier, context, nextResolve) {
      const result = nextResolve(specifier, context);
      const url = result?.url;
      if (typeof url !== "string" || !url.endsWith(TARGET) || !url.startsWith("file:")) return result;
      const rootUrl = url.slice(0, -TARGET.length);
      let use = decided.get(rootUrl);
      if (use === undefined) {
        const root = fileURLToPath(`${rootUrl}/`);
        const check = checkPi(root);
        use = check.ok;
        decided.set(rootUrl, use);
        // the behaviour of the release whose module matched, in force before our module loads
        if (use) require("../lib/profile.js").use(check.profile, "register");
        if (check.isPi && !use) onSkip(skipMessage(check.why, root));
      }
      return use ? { url: ours, format: "module", shortCircuit: true } : result;
    },
  });
  installed = true;
  return true;
}

module.exports = { install, checkPi, skipMessage, PI_PACKAGE, TARGET };
