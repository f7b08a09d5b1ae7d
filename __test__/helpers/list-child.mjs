// A fresh process that lists a folder with one implementation and prints what it got, for
// the listing-index tests (__test__/list/listing-index.test.mjs).
//
//   node list-child.mjs <ref|ours> <dir> <cwd> <ids…>
//
// Prints one JSON line: { out, rchar } where `out` holds listAll(dir) with its progress
// sequence, list(cwd, dir), findById(cwd, id, dir) for each id and continueRecent's file,
// with Dates as ISO strings and paths relative to <dir>; `rchar` is the bytes this process
// read (read(2) calls, from /proc/self/io) during those calls.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { REF_URL } from "./impls.mjs";

const [impl, dir, cwd, ...ids] = process.argv.slice(2);
const mod = impl === "ours" ? await import("../../index.mjs") : await import(REF_URL);
const { SessionManager } = mod;

const rchar = () => {
  try {
    return Number(/rchar: (\d+)/.exec(readFileSync("/proc/self/io", "utf8"))[1]);
  } catch {
    return Number.NaN;
  }
};
const rel = (p) => (typeof p === "string" && p.startsWith(dir) ? relative(dir, p) : p);
const info = (i) =>
  Object.entries(i).map(([k, v]) => [
    k,
    v instanceof Date
      ? Number.isNaN(v.getTime())
        ? "Invalid Date"
        : v.toISOString()
      : v === undefined
        ? "<undefined>"
        : k === "path"
          ? rel(v)
          : v,
  ]);

const before = rchar();
const progress = [];
// Which files finish first among concurrent reads varies (the reference reads 64 at once), so
// a partial list is kept only for the last call, and as a set (sessions with equal `modified`
// keep their finishing order); whether one was published is kept for every call.
const all = await SessionManager.listAll(dir, (loaded, total, partial) =>
  progress.push([
    loaded,
    total,
    partial === undefined ? "none" : loaded === total ? partial.map((i) => JSON.stringify(info(i))).sort() : "some",
  ]),
);
const listed = await SessionManager.list(cwd, dir);
const found = ids.map((id) => rel(SessionManager.findById(cwd, id, dir) ?? null));
let recent;
try {
  recent = rel(SessionManager.continueRecent(cwd, dir).getSessionFile());
} catch (e) {
  recent = `throws ${e.message}`;
}
const read = rchar() - before;
process.stdout.write(
  `${JSON.stringify({ out: { all: all.map(info), progress, listed: listed.map(info), found, recent }, rchar: read })}\n`,
);
