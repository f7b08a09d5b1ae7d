// Run by mapped.test.mjs: opens a session whose images stay in the mapped snapshot, holds every
// image string, then does what argv[3] says to the file, reads the strings again and prints
// one JSON line. Modes:
//   rss        nothing: peak RSS (VmHWM) of open + getBranch + getEntries + context;
//   truncate   truncates the file to half its size (another process's truncation);
//   rename     renames another file over it (how this library and pi rewrite a session);
//   inplace    overwrites the file's bytes in place, same length (another program's rewrite).
import { createHash } from "node:crypto";
import { readFileSync, renameSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { SessionManager } from "../../index.mjs";

const [file, mode] = process.argv.slice(2);
const sha = (s) => createHash("sha256").update(s, "latin1").digest("hex");
const sm = SessionManager.open(file);
const branch = sm.getBranch();
const entries = sm.getEntries();
const context = sm.buildSessionContext();
const images = branch.flatMap((e) =>
  e.type === "message" && Array.isArray(e.message.content) ? e.message.content.filter((c) => c.type === "image") : [],
);
const hwm = () => Number(readFileSync("/proc/self/status", "utf8").match(/VmHWM:\s+(\d+)/)[1]) >> 10;
const out = { images: images.length, entries: entries.length, contextMessages: context.messages.length };
if (mode === "rss") {
  out.peakMiB = hwm();
  // A few images read in full: the bytes are there when asked for.
  out.sampled = [0, images.length >> 1, images.length - 1].map((i) => sha(images[i].data));
} else {
  const size = statSync(file).size;
  if (mode === "truncate") truncateSync(file, size >> 1);
  if (mode === "rename") {
    writeFileSync(`${file}.new`, "x".repeat(1000));
    renameSync(`${file}.new`, file);
  }
  if (mode === "inplace") writeFileSync(file, Buffer.alloc(size, "Z"));
  out.after = images.map((c) => sha(c.data));
  // Every string still has its length; what a NUL-only or Z-only one looks like.
  out.lengths = images.map((c) => c.data.length);
  out.nul = images.map((c) => /^\0*$/.test(c.data));
  out.zed = images.map((c) => /^Z*$/.test(c.data));
}
console.log(JSON.stringify(out));
