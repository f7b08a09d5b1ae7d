"use strict";
// Our environment variables have one prefix, PI_SESSION_NATIVE_. Two that `pi-native` read under
// PI_NATIVE_ before 2026-12-06 keep working under their old names (deprecated: docs/pi.md,
// "Environment variables"); the new name wins when both are set.

const RENAMED = {
  PI_SESSION_NATIVE_PI_DIR: "PI_NATIVE_PI_DIR",
  PI_SESSION_NATIVE_PARTIAL_LISTS: "PI_NATIVE_PARTIAL_LISTS",
};

/** The value of our variable `name`, or of its deprecated old name. */
function setting(name, env = process.env) {
  const value = env[name];
  if (value !== undefined) return value;
  const old = RENAMED[name];
  return old === undefined ? undefined : env[old];
}

module.exports = { RENAMED, setting };
