// Run by hazards.test.mjs, once with pi's own class ("ref") and once with ours ("ours"), with
// the same steps: opens an image session, takes what JS holds (the image strings, and copies
// of them made before anything happens), lets a hazard happen to the file, then prints one
// JSON line of what it sees. Modes (argv[4]):
//   truncate      another process truncates the file to half;
//   inplace       another process rewrites the file in place with other bytes (same length);
//   restore       another process truncates it to 0 (the strings are read), then writes the
//                 same bytes back;
//   early:<m>     another process truncates the file before the first use of the entries, then
//                 method <m> (getEntries, getBranch, buildSessionContext) runs first;
//   rewrite       pi's `_rewriteFile` in this process: open the path with "w", write each entry;
//   writesync     another process truncates the file, then `fs.writeSync` of each held string;
//   kill          a SIGBUS sent to this process with a JS listener (it must be called);
//   kill-default  a SIGBUS sent to this process without a listener (the default action);
//   late          a SIGBUS listener added after the open, then another process truncates the file;
//   on-off        a SIGBUS listener added and removed after the open, then the same;
//   pinned        one image string held, the session deleted and the manager collected: the
//                 space that deleted files mapped by this process still take (Linux, where
//                 /proc/self/map_files can be read; else null). Needs --expose-gc.
//   switch        the strings let go of, then newSession() and a GC: the same space, read with
//                 no turn of the event loop.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [impl, file, mode] = process.argv.slice(2);
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const REF = join(REPO, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core", "session-manager.js");
const { SessionManager } = await import(impl === "ref" ? pathToFileURL(REF).href : "../../index.mjs");

const sha = (s) => createHash("sha256").update(s).digest("hex");
/** Runs `code` in another Node process (a writer that is not us), with `file` as `f`. */
const other = (code) => {
  const r = spawnSync(process.execPath, [
    "-e",
    `const fs = require("node:fs"); const f = ${JSON.stringify(file)}; ${code}`,
  ]);
  if (r.status !== 0) throw new Error(`the other process failed: ${r.stderr}`);
};
/** Bytes on disk of the deleted files this process maps (null where they cannot be read). */
const pinnedBytes = () => {
  let total = 0;
  for (const line of readFileSync("/proc/self/maps", "utf8").split("\n")) {
    if (!line.endsWith("(deleted)")) continue;
    try {
      total += statSync(`/proc/self/map_files/${line.split(" ")[0]}`).blocks * 512;
    } catch {
      return null;
    }
  }
  return total;
};
const images = (entries) =>
  entries.flatMap((e) =>
    e.type === "message" && Array.isArray(e.message.content) ? e.message.content.filter((c) => c.type === "image") : [],
  );

let sm = SessionManager.open(file);
const out = {};

if (mode.startsWith("early:")) {
  other("fs.truncateSync(f, fs.statSync(f).size >> 1)");
  const first = mode.slice("early:".length);
  try {
    const got = first === "buildSessionContext" ? sm.buildSessionContext().messages : sm[first]();
    out.first = sha(JSON.stringify(got));
    out.entries = sha(JSON.stringify(sm.getEntries()));
    out.count = sm.getEntries().length;
  } catch (e) {
    out.error = String(e.message).slice(0, 200);
  }
  console.log(JSON.stringify(out));
  process.exit(0);
}

const held = images(sm.getBranch()).map((c) => c.data);
// Copies on the heap, taken before anything happens (what `===` and a Map compare against).
const copies = held.map((s) => Buffer.from(s, "latin1").toString("latin1"));
const before = held.map(sha);
const size = statSync(file).size;
const same = () => held.every((s, i) => s === copies[i] && sha(s) === before[i]);

if (mode === "truncate") {
  other("fs.truncateSync(f, fs.statSync(f).size >> 1)");
  out.same = same();
} else if (mode === "inplace") {
  other(
    `const fd = fs.openSync(f, "r+"); fs.writeSync(fd, Buffer.alloc(${size}, "Z"), 0, ${size}, 0); fs.closeSync(fd);`,
  );
  out.same = same();
} else if (mode === "restore") {
  other(`fs.copyFileSync(f, f + ".orig"); fs.truncateSync(f, 0)`);
  out.during = same();
  other(`fs.writeFileSync(f, fs.readFileSync(f + ".orig"))`);
  out.same = same();
  const index = new Map(copies.map((s, i) => [s, i]));
  out.found = held.every((s, i) => index.get(s) === i);
} else if (mode === "rewrite") {
  // pi's _rewriteFile: the header and every entry, JSON.stringify'd, into the path opened "w".
  const all = [sm.getHeader(), ...sm.getEntries()];
  const fd = openSync(file, "w");
  for (const e of all) writeSync(fd, `${JSON.stringify(e)}\n`);
  closeSync(fd);
  const onDisk = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  out.disk = images(onDisk).map((c) => sha(c.data));
  out.sizeSame = statSync(file).size === size;
  out.same = same();
} else if (mode === "writesync") {
  other("fs.truncateSync(f, 0)");
  const copy = `${file}.copy`;
  const fd = openSync(copy, "w");
  for (const s of held) writeSync(fd, s);
  closeSync(fd);
  out.written = sha(readFileSync(copy, "latin1")) === sha(copies.join(""));
  out.same = same();
} else if (mode === "kill") {
  out.heard = await new Promise((resolve) => {
    process.on("SIGBUS", () => resolve(true));
    process.kill(process.pid, "SIGBUS");
    setTimeout(() => resolve(false), 5000);
  });
  out.same = same();
} else if (mode === "kill-default") {
  process.kill(process.pid, "SIGBUS");
  // Not reached where the default action ends the process.
  await new Promise((r) => setTimeout(r, 2000));
  out.alive = true;
} else if (mode === "late" || mode === "on-off") {
  const listener = () => {};
  process.on("SIGBUS", listener);
  if (mode === "on-off") process.off("SIGBUS", listener);
  other("fs.truncateSync(f, fs.statSync(f).size >> 1)");
  out.same = same();
  out.entries = sm.getEntries().length;
} else if (mode === "pinned") {
  const one = held[held.length >> 1];
  held.length = 0;
  copies.length = 0;
  unlinkSync(file);
  sm = null;
  for (let i = 0; i < 5; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  out.pinned = pinnedBytes();
  out.held = one.length;
} else if (mode === "switch") {
  // The strings let go of, then the manager switches to a new session and a GC collects its
  // old objects: what the old session mapped is let go at once, with no turn of the event loop
  // (which Node-API finalizers wait for).
  held.length = 0;
  copies.length = 0;
  out.before = pinnedBytes();
  sm.newSession();
  globalThis.gc();
  out.pinned = pinnedBytes();
} else {
  throw new Error(`unknown mode ${mode}`);
}
out.images = held.length;
console.log(JSON.stringify(out));
process.exit(0);
