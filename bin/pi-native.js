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
// (lib/pi-bundle.js: built on the first run for each installed pi, cached), as pi's own `pi` bin is a
// bundle: its ~2,000 modules would otherwise cost ~0.7 s of startup. PI_NATIVE_BUNDLE=0 (or no rolldown, or
// PI_SESSION_NATIVE_TRACE) runs `dist/cli.js` itself through the hook.
//
// pi 1.6.x gets our SessionManager; any other pi version runs as it ships, with its own (one line on stderr).
// Bad setups (Node older than 22.19, no pi installed) print one line and exit 2 before pi is loaded,
// so no session file is touched.
//
// Written for old Nodes too (no syntax newer than ES2017), so that they get the one-line message.

var PI_PACKAGE = "@earendil-works/pi-coding-agent";
var NEED = [22, 19];

function die(message) {
  process.stderr.write("pi-native: " + message + "\n");
  process.exit(2);
}

var version = process.versions.node.split(".").map(Number);
if (version[0] < NEED[0] || (version[0] === NEED[0] && version[1] < NEED[1])) {
  die("pi needs Node >= " + NEED.join(".") + ", this is Node " + process.versions.node + " (" + process.execPath + ")");
}

var fs = require("node:fs");
var path = require("node:path");

function isPi(dir) {
  return fs.existsSync(path.join(dir, "package.json")) && fs.existsSync(path.join(dir, "dist", "cli.js"));
}

function piAt(nodeModules) {
  var dir = path.join(nodeModules, PI_PACKAGE);
  return isPi(dir) ? dir : null;
}

function searchUp(start) {
  var dir = path.resolve(start);
  for (;;) {
    var found = piAt(path.join(dir, "node_modules"));
    if (found) return found;
    var parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

function globalRoots() {
  var roots = [];
  if (process.env.npm_config_prefix) roots.push(process.env.npm_config_prefix);
  if (process.env.PREFIX) roots.push(process.env.PREFIX);
  // <prefix>/bin/node -> <prefix>/lib/node_modules; on Windows <prefix>/node.exe -> <prefix>/node_modules
  roots.push(path.resolve(path.dirname(process.execPath), ".."));
  return roots.map(function (prefix) {
    return process.platform === "win32" ? path.join(prefix, "node_modules") : path.join(prefix, "lib", "node_modules");
  });
}

function npmRootGlobal() {
  try {
    var out = require("node:child_process").execFileSync(process.platform === "win32" ? "npm.cmd" : "npm", ["root", "-g"], {
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10000,
      shell: process.platform === "win32",
    });
    return String(out).trim() || null;
  } catch (e) {
    return null;
  }
}

function findPi() {
  // an explicit pi package directory
  if (process.env.PI_NATIVE_PI_DIR) return isPi(process.env.PI_NATIVE_PI_DIR) ? path.resolve(process.env.PI_NATIVE_PI_DIR) : null;
  // 1. the project's node_modules (from the current directory up)
  var found = searchUp(process.cwd());
  if (found) return found;
  // 2. beside this package (a global install of both, or a project that has both)
  found = searchUp(path.join(__dirname, ".."));
  if (found) return found;
  // 3. the global install
  var roots = globalRoots();
  for (var i = 0; i < roots.length; i++) {
    found = piAt(roots[i]);
    if (found) return found;
  }
  var npmRoot = npmRootGlobal();
  return npmRoot ? piAt(npmRoot) : null;
}

var piDir = findPi();
if (!piDir) {
  die(
    "no pi installed (looked for " +
      PI_PACKAGE +
      " in node_modules from " +
      process.cwd() +
      " up, beside pi-session-native, and in the global npm root); install it: npm install -g " +
      PI_PACKAGE,
  );
}

var mod = require("node:module");
// As pi's own bundle does: compiled code is cached on disk (NODE_COMPILE_CACHE chooses the directory,
// NODE_DISABLE_COMPILE_CACHE=1 turns it off).
if (typeof mod.enableCompileCache === "function" && !process.env.NODE_DISABLE_COMPILE_CACHE) {
  try {
    mod.enableCompileCache();
  } catch (e) {
    // an unwritable cache directory only costs startup time
  }
}

var hook = require("../lib/pi-hook.js");
var url = require("node:url");
var cli = path.join(piDir, "dist", "cli.js");
var check = hook.checkPi(piDir);

function run(entry) {
  // pi reads process.argv.slice(2) and, for `pi update`, process.argv[1] as its entry point.
  process.argv[1] = cli;
  import(url.pathToFileURL(entry).href).catch(function (e) {
    process.stderr.write("pi-native: cannot load " + entry + ": " + (e && e.stack ? e.stack : e) + "\n");
    process.exit(1);
  });
}

if (!check.ok) {
  // Another pi version: pi as it ships (its own `pi` bin), with its own SessionManager.
  process.stderr.write(hook.skipMessage(check.version, piDir) + "\n");
  var pkg = JSON.parse(fs.readFileSync(path.join(piDir, "package.json"), "utf8"));
  var bin = pkg.bin && (typeof pkg.bin === "string" ? pkg.bin : pkg.bin.pi);
  run(bin ? path.join(piDir, bin) : cli);
} else {
  // The hook also serves the bundle: extensions that import pi's SessionManager get ours too.
  if (!hook.install()) die("this Node (" + process.versions.node + ") has no module.registerHooks()");
  var useBundle = process.env.PI_NATIVE_BUNDLE !== "0" && !process.env.PI_SESSION_NATIVE_TRACE;
  var bundle = useBundle ? require("../lib/pi-bundle.js") : null;
  var entry = bundle ? bundle.cachedEntry(piDir) : null;
  if (entry || !bundle || !bundle.canBuild()) {
    run(entry || cli);
  } else {
    // First run for this pi: build the bundle (a few seconds, once), then run it.
    process.stderr.write("pi-native: bundling pi " + check.version + " for a fast startup (once per pi version)...\n");
    bundle.build(piDir).then(run, function (e) {
      process.stderr.write("pi-native: bundling failed (" + (e && e.message ? e.message : e) + "); running pi unbundled\n");
      run(cli);
    });
  }
}
