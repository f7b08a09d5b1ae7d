"use strict";
// A new session's header and file path, as pi 1.6.0 builds them in `newSession`,
// `createBranchedSession` and `forkFrom`.

const { join } = require("node:path");
const { nowIso } = require("./ids.js");
const { CURRENT_SESSION_VERSION } = require("./migrate.js");

/** The header of a new session (`JSON.stringify` drops an undefined `parentSession`). */
function sessionHeader(id, timestamp, cwd, parentSession) {
  return { type: "session", version: CURRENT_SESSION_VERSION, id, timestamp, cwd, parentSession };
}

/** `<dir>/<timestamp with : and . replaced by ->_<id>.jsonl`. */
function sessionFilePath(dir, timestamp, id) {
  return join(dir, `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`);
}

/** The header and file path of a new session `id` in `dir`, stamped now. */
function newSessionParts(dir, cwd, parentSession, id) {
  const timestamp = nowIso();
  return { id, header: sessionHeader(id, timestamp, cwd, parentSession), file: sessionFilePath(dir, timestamp, id) };
}

module.exports = { newSessionParts };
