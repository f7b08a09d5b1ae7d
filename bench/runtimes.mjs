// Listings under the runtime that runs this file, the reference against ours, interleaved (the
// order alternates), medians. Under Bun the core scans with Bun's line ends and without the
// listing index (docs/fidelity.md, "Under Bun and other runtimes"), so every listing is a full scan.
//
//   .cache/bun-1.4.5/package/bin/bun bench/runtimes.mjs [rounds]   (Bun as npm run test:bun fetches it)
//   node bench/runtimes.mjs [rounds]                 the same on Node, for comparison
//
// Data: the 1,000-session folder and the 40-project agent dir of `npm run bench` (support/gen.mjs,
// seed 42, generated under .bench-data/ when missing).
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureBenchData } from "../support/gen.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
const data = ensureBenchData(join(REPO, ".bench-data"), { want: ["folder", "agent"], log: console.log });
process.env.PI_CODING_AGENT_DIR = data.agent.root;
const REFERENCE = join(REPO, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");
const impls = {
  reference: (await import(REFERENCE)).SessionManager,
  ours: createRequire(import.meta.url)(join(REPO, "index.js")).SessionManager,
};
const ops = {
  "listAll(dir), 1,000 sessions": (SM) => SM.listAll(join(data.base, "folder-1000")),
  "listAll(), 40 projects, 1,200 sessions": (SM) => SM.listAll(),
};
const rounds = Number(process.argv[2] ?? 5);
const runtime = typeof Bun === "undefined" ? `Node ${process.version}` : `Bun ${Bun.version}`;
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

console.log(`| ${runtime}, ${rounds} rounds | reference | ours | ratio |`);
console.log("|---|---:|---:|---:|");
for (const [name, op] of Object.entries(ops)) {
  const times = { reference: [], ours: [] };
  const counts = {};
  for (let r = 0; r < rounds; r++) {
    for (const key of r % 2 ? ["ours", "reference"] : ["reference", "ours"]) {
      const start = performance.now();
      counts[key] = (await op(impls[key])).length;
      times[key].push(performance.now() - start);
    }
  }
  if (counts.reference !== counts.ours)
    throw new Error(`${name}: ${counts.reference} sessions listed by the reference, ${counts.ours} by ours`);
  const [a, b] = [median(times.reference), median(times.ours)];
  console.log(`| ${name} | ${a.toFixed(0)} ms | ${b.toFixed(0)} ms | **${(a / b).toFixed(1)}×** |`);
}
