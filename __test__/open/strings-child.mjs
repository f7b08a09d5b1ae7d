// Run with --expose-gc by strings.test.mjs. Large sessions hand their long strings to V8
// as external strings that point into memory the addon owns and frees when V8 collects
// them. Checks that entries kept alive stay intact while other sessions' strings are
// collected and their memory reused, and that the memory is given back (pieces of
// entries and listing texts both).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { SessionManager } from "../../index.mjs";

const { binding } = createRequire(import.meta.url)("../../lib/native.js");

const dir = mkdtempSync(join(tmpdir(), "psn-strings-"));
const ts = (i) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();

/** A ~3 MiB session (past 2 MiB: its lines are read on the core's thread, in pieces) whose
 * tool outputs are long strings with characters above U+00FF. */
function writeSession(name, salt) {
  const lines = [
    JSON.stringify({ type: "session", version: 3, id: `s-${name}`, timestamp: ts(0), cwd: "/tmp/strings" }),
  ];
  const ask = { role: "user", content: `${name} asks → ${salt} ${"why? ".repeat(60)}`, timestamp: 0 };
  lines.push(JSON.stringify({ type: "message", id: `${name}0`, parentId: null, timestamp: ts(0), message: ask }));
  let parent = `${name}0`;
  for (let i = 1; i <= 900; i++) {
    const text = `${name} ${i} ${salt} → ${'line of output\n\t"quoted" '.repeat(80 + (i % 80))} 😀 ü ${i}`;
    const message = {
      role: "toolResult",
      toolCallId: `c${i}`,
      toolName: "bash",
      content: [{ type: "text", text }],
      isError: false,
      timestamp: i,
    };
    const id = `${name}${i}`;
    lines.push(JSON.stringify({ type: "message", id, parentId: parent, timestamp: ts(i), message }));
    parent = id;
  }
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

/** What `JSON.parse` of each entry line gives: the reference's entries. */
const expected = (path) => readFileSync(path, "utf8").trim().split("\n").slice(1).join("\n");
const got = (entries) => entries.map((e) => JSON.stringify(e)).join("\n");
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((r) => setImmediate(r));
  }
};

/** Opens a session, checks its entries, and lets everything it made go. */
function roundTrip(path, label) {
  if (got(SessionManager.open(path).getEntries()) !== expected(path))
    throw new Error(`${label}: entries differ from the file`);
}

try {
  const kept = writeSession("kept", 0);
  const keptEntries = SessionManager.open(kept).getEntries();
  if (got(keptEntries) !== expected(kept)) throw new Error("kept session: entries differ from the file");
  await settle();
  const keptBytes = binding.externalStringBytes();
  const copying = process.env.PI_SESSION_NATIVE_COPY_STRINGS === "1";
  if (copying ? keptBytes !== 0 : keptBytes < 2 ** 20)
    throw new Error(`${keptBytes} bytes of strings went over without a copy`);
  for (let round = 1; round <= 12; round++) {
    roundTrip(writeSession(`other${round % 3}`, round), `round ${round}`);
    await settle();
    // Reuse freed memory: strings built in JS land where collected ones were.
    const junk = [];
    for (let i = 0; i < 200; i++) junk.push("x".repeat(4096 + i) + round);
    if (got(keptEntries) !== expected(kept)) throw new Error(`round ${round}: kept entries changed`);
  }
  // Listing hands its texts over the same way.
  const listed = async () => {
    const infos = await SessionManager.list("/tmp/strings", dir);
    const asks = infos.map((i) => i.firstMessage.split(" ")[0]).sort();
    if (asks.join() !== "kept,other0,other1,other2") throw new Error(`listing: ${asks}`);
    if (!copying && binding.externalStringBytes() <= keptBytes) throw new Error("listing made no external strings");
  };
  await listed();
  await listed();
  await settle();
  // Only the kept session's strings are still alive: every other one was freed.
  const leftMiB = (binding.externalStringBytes() - keptBytes) / 2 ** 20;
  console.log(JSON.stringify({ ok: got(keptEntries) === expected(kept), keptMiB: keptBytes / 2 ** 20, leftMiB }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
