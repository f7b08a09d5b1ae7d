#!/usr/bin/env node
"use strict";
// pi-native: pi's CLI on the native SessionManager.
//
// Finds the installed pi (@earendil-works/pi-coding-agent: the project's node_modules from the current
// directory up, then beside this package, then the global install) and runs pi's own `pi` bin (its
// bundle, dist/bundle/cli.js) in this same process, after replacing the statics of pi's SessionManager
// class with ours (pi/swap.js): pi's dist/bundle/index.js exports the very class that the bundled
// `main` uses, and pi's bundle creates instances only inside those statics, so every flow goes through
// them, the startup ones too (-r, -c, --session, --fork, the first session), with no bundler, no hook
// and no cache. Being the same process, it has pi's stdio, exit code and signals exactly.
//
// PI_SESSION_NATIVE_SWAP (or `"piSessionNative": { "swap": ... }` in pi's settings.json): `all` (the
// default: every static), `lists` (list and listAll only), `off` (pi as it ships).
// Only a pi whose session module the gate passes (pi/gate.js: its fingerprint is in pi/verified.json,
// whatever pi's version says) gets ours, in the profile of the release that matched; any other runs as
// it ships, with its own SessionManager, after one line on stderr, as does pi where no native binary of
// ours loads (PI_SESSION_NATIVE_NO_FALLBACK=1: exit 2 instead). Bad setups (Node older than 22.19, no pi
// installed, a bad PI_SESSION_NATIVE_SWAP) print one line and exit 2 before pi is loaded, so no session
// file is touched. PI_SESSION_NATIVE_TRACE runs pi's unbundled CLI through the resolve hook of
// `pi-session-native/register` with every call timed (pi/trace.mjs); there the hook's gate decides.
//
// Plain CommonJS that old Nodes parse too (nothing newer than Node 14's syntax), so they get the one-line message.

const PI_PACKAGE = "@earendil-works/pi-coding-agent";
const NEED = [22, 19];

function die(message) {
  process.stderr.write(`pi-native: ${message}\n`);
  process.exit(2);
}

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < NEED[0] || (major === NEED[0] && minor < NEED[1])) {
  die(`pi needs Node >= ${NEED.join(".")}, this is Node ${process.versions.node} (${process.execPath})`);
}

const fs = require("node:fs");
const path = require("node:path");

const isPi = (dir) => fs.existsSync(path.join(dir, "package.json")) && fs.existsSync(path.join(dir, "dist", "cli.js"));

function piAt(nodeModules) {
  const dir = path.join(nodeModules, PI_PACKAGE);
  return isPi(dir) ? dir : null;
}

function searchUp(start) {
  let dir = path.resolve(start);
  for (;;) {
    const found = piAt(path.join(dir, "node_modules"));
    if (found) return found;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

function globalRoots() {
  const prefixes = [process.env.npm_config_prefix, process.env.PREFIX].filter(Boolean);
  // <prefix>/bin/node -> <prefix>/lib/node_modules; on Windows <prefix>/node.exe -> <prefix>/node_modules
  prefixes.push(path.resolve(path.dirname(process.execPath), ".."));
  return prefixes.map((prefix) =>
    process.platform === "win32" ? path.join(prefix, "node_modules") : path.join(prefix, "lib", "node_modules"),
  );
}

function npmRootGlobal() {
  try {
    const win = process.platform === "win32";
    const out = require("node:child_process").execFileSync(win ? "npm.cmd" : "npm", ["root", "-g"], {
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10000,
      shell: win,
    });
    return String(out).trim() || null;
  } catch {
    return null;
  }
}

function findPi() {
  // an explicit pi package directory
  const explicit = require("./env.js").setting("PI_SESSION_NATIVE_PI_DIR");
  if (explicit) return isPi(explicit) ? path.resolve(explicit) : null;
  // 1. the project's node_modules (from the current directory up);
  // 2. beside this package (a global install of both, or a project that has both)
  const found = searchUp(process.cwd()) || searchUp(path.join(__dirname, ".."));
  if (found) return found;
  // 3. the global install
  for (const root of globalRoots()) {
    const atRoot = piAt(root);
    if (atRoot) return atRoot;
  }
  const npmRoot = npmRootGlobal();
  return npmRoot ? piAt(npmRoot) : null;
}

function enableCompileCache() {
  // As pi's own bundle does: compiled code is cached on disk (NODE_COMPILE_CACHE chooses the directory,
  // NODE_DISABLE_COMPILE_CACHE=1 turns it off).
  const mod = require("node:module");
  if (typeof mod.enableCompileCache !== "function" || process.env.NODE_DISABLE_COMPILE_CACHE) return;
  try {
    mod.enableCompileCache();
  } catch {
    // an unwritable cache directory only costs startup time
  }
}

function main() {
  const piDir = findPi();
  if (!piDir) {
    die(
      `no pi installed (looked for ${PI_PACKAGE} in node_modules from ${process.cwd()} up, beside pi-session-native, ` +
        `and in the global npm root); install it: npm install -g ${PI_PACKAGE}`,
    );
  }
  const swap = require("./swap.js");
  const choice = swap.chooseMode("all");
  if (choice.error) die(choice.error);
  enableCompileCache();
  const url = require("node:url");
  const pkg = JSON.parse(fs.readFileSync(path.join(piDir, "package.json"), "utf8"));
  const bin = pkg.bin && (typeof pkg.bin === "string" ? pkg.bin : pkg.bin.pi);
  const stockBin = path.join(piDir, bin || path.join("dist", "cli.js"));

  const run = (entry) => {
    // pi reads process.argv.slice(2) and, for `pi update`, process.argv[1] as its entry point.
    process.argv[1] = entry;
    return import(url.pathToFileURL(entry).href).catch((e) => {
      process.stderr.write(`pi-native: cannot load ${entry}: ${e?.stack ? e.stack : e}\n`);
      process.exit(1);
    });
  };
  /** pi as it ships, with its own SessionManager, after one line saying why (none for `off`). */
  const runStock = (why) => {
    if (why) process.stderr.write(`pi-native: ${why}; pi runs with its own SessionManager\n`);
    return run(stockBin);
  };

  if (choice.mode === "off") return runStock();
  // No native binding loads here: our module would only hand pi back its own class (lib/load.js).
  const load = require("../lib/load.js");
  if (load.bindingError()) {
    if (load.noFallback()) die(`${load.whatIsMissing()}, and ${load.NO_FALLBACK} is set`);
    return runStock(load.whatIsMissing());
  }
  if (process.env.PI_SESSION_NATIVE_TRACE) {
    // Profiling: pi's unbundled CLI with every call of our module timed, through the resolve hook.
    const hook = require("./resolve-hook.js");
    if (!hook.install()) die(`this Node (${process.versions.node}) has no module.registerHooks()`);
    swap.usePartialListsByTime();
    return run(path.join(piDir, "dist", "cli.js"));
  }
  const index = path.join(piDir, "dist", "bundle", "index.js");
  if (!fs.existsSync(index)) return runStock(`pi ${pkg.version} has no ${index}`);
  return import(url.pathToFileURL(index).href).then(
    (piModule) => {
      const verdict = require("./gate.js").checkClass(piDir, piModule.SessionManager, pkg.version);
      if (!verdict.ok) return runStock(`${verdict.why} (${piDir})`);
      const loadOurs = () => require("../index.js").SessionManager;
      swap.install(piModule.SessionManager, loadOurs, choice.mode, "pi-native", verdict.profile);
      return run(stockBin);
    },
    (e) => runStock(`cannot load ${index} (${String(e?.message ?? e).split("\n")[0]})`),
  );
}

main();
