#!/usr/bin/env node
"use strict";
// pi-native: pi's CLI on the native SessionManager.
//
// Finds the installed pi (@earendil-works/pi-coding-agent: the project's node_modules from the current
// directory up, then beside this package, then the global install), installs the resolve hook of
// `pi-session-native/register` and runs pi's CLI in this same process, as
// `node --import pi-session-native/register <pi>/dist/cli.js …args` would. Being the same process, it has
// pi's stdio, exit code and signals exactly: nothing to forward.
//
// What it runs is a bundle of pi's unbundled CLI with our module in place of its session manager
// (launcher/bundle.js: built on the first run for each installed pi, cached), as pi's own `pi` bin is a
// bundle: its ~2,000 modules would otherwise cost ~0.7 s of startup. PI_NATIVE_BUNDLE=0 (or
// PI_SESSION_NATIVE_TRACE) runs `dist/cli.js` itself through the hook; so does a missing rolldown (an optional
// peer dependency, not installed with this package), after one line saying how to get the fast start.
//
// pi 1.6.x gets our SessionManager; any other pi version runs as it ships, with its own (one line on stderr),
// as does pi where no native binary of ours loads (PI_SESSION_NATIVE_NO_FALLBACK=1: exit 2 instead).
// Bad setups (Node older than 22.19, no pi installed) print one line and exit 2 before pi is loaded,
// so no session file is touched.
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
  const explicit = process.env.PI_NATIVE_PI_DIR;
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

/** One line: rolldown is missing, and the command that installs it where launcher/bundle.js finds it. */
function noRolldownMessage() {
  const ours = path.resolve(__dirname, "..");
  const global = globalRoots().some((root) => path.resolve(root, "pi-session-native") === ours);
  // <project>/node_modules/pi-session-native, where <project> has a package.json (a global root's parent has none)
  const project = path.dirname(path.dirname(ours));
  const inProject =
    path.basename(path.dirname(ours)) === "node_modules" && fs.existsSync(path.join(project, "package.json"));
  const how = global || !inProject ? "npm install -g rolldown" : `npm install rolldown in ${project}`;
  return `rolldown is not installed, so pi starts unbundled (~0.7 s slower); for the fast start: ${how} (PI_NATIVE_BUNDLE=0 skips this line)`;
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
  enableCompileCache();
  // pi-native's one deviation from 1.6.0 (lib/listing.js): partial session lists on a time
  // cadence, so /resume does not rebuild its tree per 10 files. PI_NATIVE_PARTIAL_LISTS=files
  // restores 1.6.0's cadence.
  globalThis[Symbol.for("pi-session-native.partialLists")] =
    process.env.PI_NATIVE_PARTIAL_LISTS === "files" ? "files" : "time";
  const hook = require("../launcher/hook.js");
  const cli = path.join(piDir, "dist", "cli.js");
  const check = hook.checkPi(piDir);

  const run = (entry) => {
    // pi reads process.argv.slice(2) and, for `pi update`, process.argv[1] as its entry point.
    process.argv[1] = cli;
    import(require("node:url").pathToFileURL(entry).href).catch((e) => {
      process.stderr.write(`pi-native: cannot load ${entry}: ${e?.stack ? e.stack : e}\n`);
      process.exit(1);
    });
  };

  // pi as it ships (its own `pi` bin), with its own SessionManager.
  const runStock = () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(piDir, "package.json"), "utf8"));
    const bin = pkg.bin && (typeof pkg.bin === "string" ? pkg.bin : pkg.bin.pi);
    run(bin ? path.join(piDir, bin) : cli);
  };

  if (!check.ok) {
    // Another pi version.
    process.stderr.write(`${hook.skipMessage(check.version, piDir)}\n`);
    runStock();
    return;
  }
  // No native binding loads here: our module would only hand pi back its own class (lib/load.js).
  const load = require("../lib/load.js");
  if (load.bindingError()) {
    if (load.noFallback()) die(`${load.whatIsMissing()}, and ${load.NO_FALLBACK} is set`);
    process.stderr.write(`pi-native: ${load.whatIsMissing()}; pi runs with its own SessionManager\n`);
    runStock();
    return;
  }
  // The hook also serves the bundle: extensions that import pi's SessionManager get ours too.
  if (!hook.install()) die(`this Node (${process.versions.node}) has no module.registerHooks()`);
  const useBundle = process.env.PI_NATIVE_BUNDLE !== "0" && !process.env.PI_SESSION_NATIVE_TRACE;
  const bundle = useBundle ? require("../launcher/bundle.js") : null;
  const entry = bundle ? bundle.cachedEntry(piDir) : null;
  if (entry || !bundle) {
    run(entry || cli);
    return;
  }
  if (!bundle.canBuild()) {
    process.stderr.write(`pi-native: ${noRolldownMessage()}\n`);
    run(cli);
    return;
  }
  // First run for this pi: build the bundle (a few seconds, once), then run it.
  process.stderr.write(`pi-native: bundling pi ${check.version} for a fast startup (once per pi version)...\n`);
  bundle.build(piDir).then(run, (e) => {
    process.stderr.write(`pi-native: bundling failed (${e?.message ? e.message : e}); running pi unbundled\n`);
    run(cli);
  });
}

main();
