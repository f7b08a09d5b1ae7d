// What every consumer check runs: a real session through the installed package.
"use strict";
const assert = require("node:assert/strict");
const { mkdtempSync, rmSync, writeFileSync, existsSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");

/**
 * The public runtime exports (pi 1.6.0's `core/session-manager` module). Written out: this runs in a
 * consumer project, against the packed package, with neither the repository nor pi to read them from.
 */
const EXPORTS = [
  "CURRENT_SESSION_VERSION",
  "SessionManager",
  "assertValidSessionId",
  "buildContextEntries",
  "buildSessionContext",
  "buildSessionProjection",
  "findMostRecentSession",
  "getDefaultSessionDir",
  "getLatestCompactionEntry",
  "loadEntriesFromFile",
  "migrateSessionEntries",
  "parseSessionEntries",
  "projectContextEntry",
  "sessionEntryToContextMessages",
];

async function smoke(api) {
  for (const name of EXPORTS) assert.notEqual(api[name], undefined, `export ${name}`);
  assert.equal(api.CURRENT_SESSION_VERSION, 3);
  const { SessionManager } = api;
  const root = mkdtempSync(join(tmpdir(), "pi-pack-smoke-"));
  try {
    const sm = SessionManager.create("/project", root);
    const user = sm.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    sm.appendMessage({
      role: "assistant",
      content: [{ type: "text", text: "hi" }],
      api: "faux",
      provider: "faux",
      model: "m",
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop",
      timestamp: 2,
    });
    sm.appendLabelChange(user, "start");
    const file = sm.getSessionFile();
    assert.ok(existsSync(file), "session file written");

    const again = SessionManager.open(file);
    assert.equal(again.getEntry(user), again.getEntry(user), "getEntry identity");
    assert.equal(again.getLabel(user), "start");
    const ctx = again.buildSessionContext();
    assert.equal(ctx.messages.length, 2);
    assert.deepEqual(ctx.model, { provider: "faux", modelId: "m" });
    assert.deepEqual(api.buildSessionContext(again.getEntries(), again.getLeafId()), ctx);
    assert.equal(again.getTree().length, 1);
    assert.equal(api.loadEntriesFromFile(file).length, 4);

    const listed = await SessionManager.list("/project", root);
    assert.equal(listed.length, 1);
    assert.ok(listed[0].modified instanceof Date, "SessionInfo dates are Dates");
    const progress = [];
    await SessionManager.listAll(root, (loaded, total) => progress.push([loaded, total]));
    assert.equal(api.findMostRecentSession(root), file);

    writeFileSync(join(root, "bad.jsonl"), '{"type":"message"}\n');
    assert.throws(() => SessionManager.open(join(root, "bad.jsonl")), /not a valid pi session/);
    return { entries: again.getEntryCount(), messages: ctx.messages.length, listed: listed.length };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Which installed .node file was loaded (relative to node_modules), checked against EXPECT_ADDON_PACKAGE. */
function loadedAddon() {
  const file = Object.keys(require.cache).find((k) => k.endsWith(".node"));
  const addon = file && file.split(/[\\/]node_modules[\\/]/).pop().replaceAll("\\", "/");
  const expected = process.env.EXPECT_ADDON_PACKAGE;
  if (expected && !(addon || "").startsWith(`${expected}/`)) throw new Error(`loaded ${addon}, expected one from ${expected}`);
  return addon;
}

module.exports = { smoke, loadedAddon, EXPORTS };
