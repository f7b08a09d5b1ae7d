// End-to-end: pi's own agent (createAgentSession, faux model, built-in tools) on our SessionManager.
//
//   npm run test:e2e        (any Node >= 20; the scenario itself runs on Node 22, fetched if needed)
//
// 1. Runs scenario.mjs twice on Node >= 22.19, once with the reference SessionManager and once with
//    ours, each in its own temp root (same path length, so token estimates match).
// 2. Compares: the sequence of SessionManager calls pi made, the values pi returned, and the session
//    files byte for byte after normalising ids, timestamps and the temp root.
// 3. Opens every file of both runs in both implementations (in this process) and compares
//    buildSessionContext(), getEntries(), getTree(), getHeader(), getLeafId() and getSessionName().
// 4. Prints the per-method call counts pi made on our SessionManager.
//
// Exit code 0 when everything matches. E2E_KEEP=1 keeps the temp roots for inspection. E2E_SELF=1 runs
// the reference on both sides (checks that the normalisation leaves two runs of one implementation equal).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { nodeBinary, REPO } from "../../../scripts/node-bin.mjs";

const require = createRequire(import.meta.url);
const REF_URL = new URL(
  "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js",
  import.meta.url,
);

let ours;
try {
  ours = require("../../../index.js");
} catch (e) {
  console.error(`cannot load pi-session-native (${e.message}); run \`npm run build\` first`);
  process.exit(1);
}
const ref = await import(REF_URL.href);

const node22 = nodeBinary(22, { minMinor: 19 });
const failures = [];
const fail = (what, detail = "") => {
  failures.push(what);
  console.log(`  FAIL ${what}${detail ? `\n${detail}` : ""}`);
};
const ok = (what) => console.log(`  ok   ${what}`);

// ---------------------------------------------------------------------------
// Run the scenario on both sides.

function runScenario(impl) {
  // Same prefix length on both sides: the temp root appears in the system prompt and tool outputs.
  const root = mkdtempSync(join(tmpdir(), `pi-e2e-${impl === "ref" ? "ref" : "our"}-`));
  const env = {
    ...process.env,
    HOME: join(root, "home"),
    PI_CODING_AGENT_DIR: join(root, "agent"),
    PI_OFFLINE: "1",
    TZ: "UTC",
  };
  const t0 = performance.now();
  execFileSync(node22, [join(REPO, "__test__/pi/e2e/scenario.mjs"), impl, root], {
    env,
    stdio: ["ignore", "inherit", "inherit"],
    timeout: 120_000,
  });
  const result = JSON.parse(readFileSync(join(root, "result.json"), "utf8"));
  result.root = root;
  result.ms = performance.now() - t0;
  return result;
}

console.log(`pi e2e: ${node22} (${execFileSync(node22, ["--version"]).toString().trim()})`);
const R = runScenario("ref");
const O = runScenario(process.env.E2E_SELF === "1" ? "ref" : "ours");

// ---------------------------------------------------------------------------
// Normalisation: random ids, clocks and the temp root. Ids map by order of first appearance, so
// the parent structure is still compared.

const ISO = String.raw`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z`;
const FILE_TS = String.raw`\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z`;
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const RE = new RegExp(
  `(${ISO})|(${FILE_TS})|(${UUID})|(?<=")([0-9a-f]{8})(?=")|(?<![\\w.])(\\d{13})(?![\\w.])|("durationMs":\\s*)\\d+`,
  "g",
);

function normalizer(root) {
  const ids = new Map();
  const uuids = new Map();
  const tag = (map, prefix, raw) => {
    if (!map.has(raw)) map.set(raw, `<${prefix}${map.size + 1}>`);
    return map.get(raw);
  };
  return (text) =>
    text
      .split(root)
      .join("<ROOT>")
      .replace(RE, (m, iso, fts, uuid, id, ms, dur) => {
        if (iso) return "<TS>";
        if (fts) return "<FTS>";
        if (uuid) return tag(uuids, "UUID", uuid);
        if (id) return tag(ids, "ID", id);
        if (ms) return "<MS>";
        if (dur) return `${dur}"<DUR>"`;
        return m;
      });
}
const normR = normalizer(R.root);
const normO = normalizer(O.root);

function firstDifference(a, b, label) {
  const la = a.split("\n");
  const lb = b.split("\n");
  for (let i = 0; i < Math.max(la.length, lb.length); i++) {
    if (la[i] !== lb[i]) {
      const cut = (s) => (s === undefined ? "(missing)" : s.length > 600 ? `${s.slice(0, 600)}…` : s);
      return `    ${label} line ${i + 1}\n    ref : ${cut(la[i])}\n    ours: ${cut(lb[i])}`;
    }
  }
  return "";
}

// ---------------------------------------------------------------------------
// 1. What pi did on each side.

console.log("\nscenario");
console.log(`  ref  ${R.calls.length} calls, ${R.files.length} files, ${R.ms.toFixed(0)} ms`);
console.log(`  ours ${O.calls.length} calls, ${O.files.length} files, ${O.ms.toFixed(0)} ms`);

const seqR = R.calls.map((c) => c.join("."));
const seqO = O.calls.map((c) => c.join("."));
if (isDeepStrictEqual(seqR, seqO))
  ok(`pi made the same ${seqO.length} SessionManager calls, in the same order, on both`);
else {
  const i = seqR.findIndex((c, k) => c !== seqO[k]);
  fail("call sequences differ", `    first difference at call ${i + 1}: ref ${seqR[i]} / ours ${seqO[i]}`);
}

// Files are compared below; here only what pi handed back to the caller.
const returnedR = normR(JSON.stringify(R.returned, null, 1));
const returnedO = normO(JSON.stringify(O.returned, null, 1));
if (returnedR === returnedO)
  ok(
    "pi's results match (agent messages, compaction, navigation, stats, forkable messages, restored model, list, continueRecent)",
  );
else fail("pi's results differ", firstDifference(returnedR, returnedO, "result.json"));

// ---------------------------------------------------------------------------
// 2. Session files, normalised.

const kinds = (res) =>
  res.files.map((f) =>
    resolve(res.root, "sessions", f) === res.sessionFiles.main
      ? "main"
      : resolve(res.root, "sessions", f) === res.sessionFiles.fork
        ? "fork"
        : "other",
  );
if (!isDeepStrictEqual(kinds(R), kinds(O))) fail("session file sets differ", `    ref ${kinds(R)} / ours ${kinds(O)}`);
else {
  for (let i = 0; i < R.files.length; i++) {
    const a = normR(readFileSync(join(R.root, "sessions", R.files[i]), "utf8"));
    const b = normO(readFileSync(join(O.root, "sessions", O.files[i]), "utf8"));
    const name = `${kinds(R)[i]} session file (${a.split("\n").length - 1} lines)`;
    if (a === b) ok(`${name} identical after normalisation`);
    else fail(`${name} differs`, firstDifference(a, b, kinds(R)[i]));
  }
}

{
  const a = normR(readFileSync(R.exported, "utf8"));
  const b = normO(readFileSync(O.exported, "utf8"));
  if (a === b)
    ok(`pi's /export file (header + branch, ${a.split("\n").length - 1} lines) identical after normalisation`);
  else fail("pi's /export file differs", firstDifference(a, b, "export"));
}

// ---------------------------------------------------------------------------
// 3. Each side's files open in the other implementation with identical results.

const views = {
  buildSessionContext: (sm) => sm.buildSessionContext(),
  getEntries: (sm) => sm.getEntries(),
  getTree: (sm) => sm.getTree(),
  getHeader: (sm) => sm.getHeader(),
  getLeafId: (sm) => sm.getLeafId(),
  getSessionName: (sm) => sm.getSessionName(),
};
for (const [side, res] of [
  ["ref run", R],
  ["our run", O],
]) {
  for (const f of res.files) {
    const file = join(res.root, "sessions", f);
    const before = readFileSync(file);
    const a = ref.SessionManager.open(file);
    const b = ours.SessionManager.open(file);
    const bad = [];
    for (const [name, view] of Object.entries(views)) {
      const va = view(a);
      const vb = view(b);
      if (!isDeepStrictEqual(va, vb) || JSON.stringify(va) !== JSON.stringify(vb)) bad.push(name);
    }
    if (!before.equals(readFileSync(file))) bad.push("(opening modified the file)");
    const kind = kinds(res)[res.files.indexOf(f)];
    if (bad.length === 0) ok(`${side}: ${kind} file: reference and ours agree on ${Object.keys(views).join(", ")}`);
    else fail(`${side}: ${kind} file opens differently`, `    ${bad.join(", ")}`);
  }
}

// ---------------------------------------------------------------------------
// 4. Per-method call counts pi made on our SessionManager.

const counts = new Map();
for (const [, method] of O.calls) counts.set(method, (counts.get(method) ?? 0) + 1);
const instances = new Set(O.calls.map(([tag]) => tag)).size;
console.log(`\nSessionManager calls pi made on ours (${instances} instances: new session, fork, reopen)`);
for (const [method, n] of [...counts].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))) {
  console.log(`  ${String(n).padStart(4)}  ${method}`);
}

if (process.env.E2E_KEEP === "1") console.log(`\nkept: ${R.root} ${O.root}`);
else for (const r of [R.root, O.root]) rmSync(r, { recursive: true, force: true });

if (failures.length) {
  console.log(`\n${failures.length} failure(s)`);
  process.exit(1);
}
console.log("\ne2e: ours is a drop-in for the reference under pi's agent");
