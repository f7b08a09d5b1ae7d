"use strict";
// The fingerprint of a pi release's session module: what the gate (pi/gate.js) compares with the
// verified table (pi/verified.json) before it lets pi run on our SessionManager.
//
// It covers everything our drop-in replaces: the SessionManager class and the module's free
// functions (buildSessionInfo, the listing helpers, loadEntriesFromFile, ...), in the form pi runs:
//   - "module": dist/core/session-manager.js (pi's SDK entry, and `pi-session-native/register`),
//     the whole file;
//   - "bundle": the chunk of dist/bundle/ that holds the class (pi's `pi` bin, pi-native), from the
//     module's first statement (`var CURRENT_SESSION_VERSION=`) to the end of the class.
// Both are hashed after one normalisation: digits at the end of identifiers (outside quoted strings) are dropped, since the
// bundler renames locals by numbering them (`entries2` -> `entries`, `join8` -> `join6` between 1.5.0
// and 1.5.2, which share their session module byte for byte). Chunk file names are not hashed either.
// A change in behaviour, a literal or a statement, changes the fingerprint. Helpers the module
// imports from other pi modules (utils/paths.js, messages.js, config.js) are not covered.

const { createHash } = require("node:crypto");
const { existsSync, readdirSync, readFileSync } = require("node:fs");
const { join } = require("node:path");

/** Where the bundle's session module starts (its first statement after the imports). */
const BUNDLE_START = "var CURRENT_SESSION_VERSION=";
const MODULE_FILE = join("dist", "core", "session-manager.js");
const BUNDLE_DIR = join("dist", "bundle");

/**
 * Drop the numeric suffixes a bundler gives renamed identifiers. Quoted string literals stay as they
 * are: a bundler never renames inside them, and "utf8" -> "utf16" is a change of behaviour.
 */
const TOKEN = /("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|\b([A-Za-z_$][A-Za-z_$]*?)\d+\b/g;
const normalise = (text) => text.replace(TOKEN, (match, literal, name) => literal ?? name);

const sha256 = (text) => createHash("sha256").update(normalise(text)).digest("hex");

/** The fingerprint of dist/core/session-manager.js's text. */
const ofModuleText = (text) => sha256(text);

/**
 * The fingerprint of the bundle's session module, given the text of the chunk that holds it and the
 * class's own source text (Function.prototype.toString of the class pi runs). Null when the chunk
 * does not hold that class after the module's start.
 */
function ofBundleText(chunk, classSource) {
  const at = chunk.indexOf(classSource);
  if (at < 0) return null;
  const start = chunk.lastIndexOf(BUNDLE_START, at);
  if (start < 0) return null;
  return sha256(chunk.slice(start, at + classSource.length));
}

/** The chunk files of pi's bundle that may hold the class: index.js's import of it first, then the rest. */
function bundleChunks(piDir) {
  const dir = join(piDir, BUNDLE_DIR);
  const chunks = join(dir, "chunks");
  if (!existsSync(chunks)) return [];
  const all = readdirSync(chunks)
    .filter((f) => f.endsWith(".js"))
    .map((f) => join(chunks, f));
  let first = null;
  try {
    const index = readFileSync(join(dir, "index.js"), "utf8");
    for (const m of index.matchAll(/import\s*\{([^}]*)\}\s*from\s*"\.\/chunks\/([^"]+)"/g)) {
      if (/(^|[\s,])SessionManager\s*(,|$)/.test(m[1]) || /\sas\s+SessionManager\s*(,|$)/.test(m[1])) {
        first = join(chunks, m[2]);
        break;
      }
    }
  } catch {
    // no index.js: every chunk is a candidate
  }
  return first ? [first, ...all.filter((f) => f !== first)] : all;
}

/**
 * The fingerprint of the session module pi runs, given pi's package directory and the class pi runs.
 * Returns { form: "module" | "bundle", fingerprint, file, also? } or null when neither form holds
 * that class. When both forms hold the very same class text, which one pi runs cannot be told from
 * the class: `also` is the other form's { form, fingerprint, file }, and the gate wants both verified.
 */
function ofInstalledClass(piDir, cls) {
  const source = Function.prototype.toString.call(cls);
  const found = [];
  const moduleFile = join(piDir, MODULE_FILE);
  try {
    const text = readFileSync(moduleFile, "utf8");
    if (text.includes(source)) found.push({ form: "module", fingerprint: ofModuleText(text), file: moduleFile });
  } catch {
    // no unbundled module: the bundle's
  }
  for (const file of bundleChunks(piDir)) {
    const fingerprint = ofBundleText(readFileSync(file, "utf8"), source);
    if (fingerprint) {
      found.push({ form: "bundle", fingerprint, file });
      break;
    }
  }
  if (found.length === 0) return null;
  return found.length === 1 ? found[0] : { ...found[0], also: found[1] };
}

/** The fingerprint of pi's unbundled module at `piDir` (what the register hook replaces), or null. */
function ofModuleAt(piDir) {
  try {
    return ofModuleText(readFileSync(join(piDir, MODULE_FILE), "utf8"));
  } catch {
    return null;
  }
}

module.exports = { BUNDLE_START, MODULE_FILE, normalise, ofBundleText, ofInstalledClass, ofModuleAt, ofModuleText };
