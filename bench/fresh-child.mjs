// One fresh-process listing for bench/fresh.mjs: loads an implementation, runs
// `list(cwd, dir)` once and prints { ms, rchar, readBytes, n } as one JSON line. `rchar` is what
// the process passed through read(2) during the call, `readBytes` what it made the storage
// layer fetch (/proc/self/io: page-cache misses; 0 when everything was cached).
import { readFileSync } from "node:fs";
import { loadImpl } from "./impls.mjs";

const [name, cwd, dir] = process.argv.slice(2);
const io = () => {
  try {
    const t = readFileSync("/proc/self/io", "utf8");
    return { rchar: Number(/rchar: (\d+)/.exec(t)[1]), readBytes: Number(/read_bytes: (\d+)/.exec(t)[1]) };
  } catch {
    return { rchar: Number.NaN, readBytes: Number.NaN };
  }
};
const impl = await loadImpl(name);
const before = io();
const t0 = performance.now();
const infos = await impl.mod.SessionManager.list(cwd, dir);
const ms = performance.now() - t0;
const after = io();
console.log(
  JSON.stringify({
    ms,
    rchar: after.rchar - before.rchar,
    readBytes: after.readBytes - before.readBytes,
    n: infos.length,
  }),
);
