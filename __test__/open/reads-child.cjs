"use strict";
// One compound operation on a session file, with the bytes this process read meanwhile
// (`rchar` of /proc/self/io, Linux): prints `{ size, read }` as JSON.
//   node reads-child.cjs <fork|branch|open> <session file> <target dir>
const { readFileSync, statSync } = require("node:fs");
const { SessionManager } = require("../../index.js");

const [op, file, dir] = process.argv.slice(2);
const rchar = () => Number(/rchar: (\d+)/.exec(readFileSync("/proc/self/io", "utf8"))[1]);
const size = statSync(file).size;
let run;
if (op === "fork") run = () => SessionManager.forkFrom(file, "/tmp/reads-cwd", dir);
else if (op === "open") run = () => SessionManager.open(file, dir);
else {
  const sm = SessionManager.open(file, dir);
  const leaf = sm.getLeafId();
  run = () => sm.createBranchedSession(leaf);
}
// Warm the code paths' own reads (module loads) outside the measured span.
rchar();
const before = rchar();
run();
const read = rchar() - before;
process.stdout.write(JSON.stringify({ size, read }));
