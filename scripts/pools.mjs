// npm run test:pools: a representative set of the differential tests in each of Vitest's
// pools other than the default (`forks`, which `npm run test:js` uses for everything).
//
//   threads     every test file in a worker thread: the addon is loaded once per worker
//               (a context-aware N-API module, as napi-rs builds it).
//   vmThreads   worker threads, and each test file in a vm context of its own: the addon's
//               objects and errors, and Node's fs errors, come from the worker's outer
//               realm, and `structuredClone` gives outer-realm objects. The facade throws
//               its own errors in its realm (runtime.js `inOwnRealm`), builds fs errors with
//               the constructor Node's fs uses (`systemError`), and `getEntries()` copies
//               the caller's array in that array's realm, as the reference's
//               `fileEntries.filter` does (entries.js `likeFileEntries`).
//
//   node scripts/pools.mjs [pool…]     # default: threads vmThreads
import { spawnSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FILES = [
  "__test__/append/random-ops.test.mjs",
  "__test__/open/files.test.mjs",
  "__test__/context/free-functions.test.mjs",
  "__test__/tree/identity.test.mjs",
  "__test__/append/aliasing.test.mjs",
  "__test__/list/runtime.test.mjs",
];
const pools = process.argv.slice(2).length ? process.argv.slice(2) : ["threads", "vmThreads"];
let failed = 0;
for (const pool of pools) {
  const t0 = performance.now();
  const r = spawnSync("npx", ["vitest", "run", `--pool=${pool}`, ...FILES], {
    cwd: REPO,
    stdio: "inherit",
    env: { DIFF_SEEDS: "40", DIFF_OPS: "60", DIFF_FREE_SEEDS: "50", ...process.env },
  });
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  console.log(`pool ${pool}: ${r.status === 0 ? "ok" : `FAILED (exit ${r.status ?? r.signal})`}  ${seconds} s`);
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
