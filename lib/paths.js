"use strict";
// pi's paths (`utils/paths.js`, `config.js`): sessions are found by these strings, which are Node's
// answers (`path.resolve`, `os.homedir`, `fileURLToPath`, `process.cwd`), not Rust's. The folder
// name of a cwd is the core's rule (`paths.rs`). `normalizePath` (with pi's Windows shell paths,
// which the core has for the CLI) stays here: pi/ reads the agent dir before any binary loads.

const { existsSync, mkdirSync } = require("node:fs");
const { homedir } = require("node:os");
const { isAbsolute, join, resolve: nodeResolvePath, posix, win32 } = require("node:path");
const { fileURLToPath } = require("node:url");
const profile = require("./profile.js");

const APP_NAME = "pi";
const CONFIG_DIR_NAME = ".pi";
const ENV_AGENT_DIR = `${APP_NAME.toUpperCase()}_CODING_AGENT_DIR`;

function getPlatformPathApi() {
  return process.platform === "win32" ? win32 : posix;
}

function getPathComparisonKey(path) {
  const pathApi = getPlatformPathApi();
  const resolvedPath = pathApi.resolve(path);
  return pathApi === win32 ? resolvedPath.toLowerCase() : resolvedPath;
}

function pathsEqual(left, right) {
  return getPathComparisonKey(left) === getPathComparisonKey(right);
}

/** How session dirs and cwds compare: pi's pathsEqual() from 1.5.0 on, `===` before (profile.js). */
function samePath(left, right) {
  return profile.has("pathsEqual") ? pathsEqual(left, right) : left === right;
}

function normalizeWindowsShellPath(filePath) {
  if (!filePath.startsWith("/") || filePath.startsWith("//") || filePath.includes("\\")) return filePath;
  const match = filePath.match(/^\/(?:mnt\/|cygdrive\/)?([a-z])(?:\/(.*))?$/i);
  if (!match) return filePath;
  const suffix = match[2]?.replaceAll("/", "\\");
  return `${match[1].toUpperCase()}:\\${suffix ?? ""}`;
}

function normalizePath(input, options = {}) {
  let normalized = options.trim ? input.trim() : input;
  if (process.platform === "win32") normalized = normalizeWindowsShellPath(normalized);
  if (options.expandTilde ?? true) {
    const home = options.homeDir ?? homedir();
    if (normalized === "~") return home;
    if (normalized.startsWith("~/") || (process.platform === "win32" && normalized.startsWith("~\\"))) {
      return join(home, normalized.slice(2));
    }
  }
  if (/^file:\/\//.test(normalized)) return fileURLToPath(normalized);
  return normalized;
}

function resolvePath(input, baseDir = process.cwd(), options = {}) {
  const normalized = normalizePath(input, options);
  const normalizedBaseDir = normalizePath(baseDir);
  return isAbsolute(normalized) ? nodeResolvePath(normalized) : nodeResolvePath(normalizedBaseDir, normalized);
}

function getAgentDir(env = process.env) {
  const envDir = env[ENV_AGENT_DIR];
  if (envDir) return normalizePath(envDir);
  return join(homedir(), CONFIG_DIR_NAME, "agent");
}

function getSessionsDir() {
  return join(getAgentDir(), "sessions");
}

/** `<agentDir>/sessions/<the cwd's folder name>` (the core's rule: `paths::session_folder_name`). */
function getDefaultSessionDirPath(cwd, agentDir = getAgentDir()) {
  const resolvedCwd = resolvePath(cwd);
  const resolvedAgentDir = resolvePath(agentDir);
  // Required here: pi/ reads the agent dir before (and without) the binding.
  const { binding } = require("./native.js");
  return join(resolvedAgentDir, "sessions", binding.sessionFolderName(resolvedCwd));
}

/** The exported `getDefaultSessionDir`: the default dir of `cwd`, made if missing. */
function getDefaultSessionDir(cwd, agentDir = getAgentDir()) {
  const sessionDir = getDefaultSessionDirPath(cwd, agentDir);
  if (!existsSync(sessionDir)) mkdirSync(sessionDir, { recursive: true });
  return sessionDir;
}

module.exports = {
  APP_NAME,
  getAgentDir,
  getDefaultSessionDir,
  getDefaultSessionDirPath,
  getSessionsDir,
  normalizePath,
  pathsEqual,
  resolvePath,
  samePath,
};
