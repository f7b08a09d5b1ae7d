// One measurement of bench/scale.mjs in a fresh process: loads one implementation, runs one
// operation once and prints one JSON line { ms, peakKiB, rchar, readBytes, sig }.
//   ms         the operation alone (module load and untimed preparation excluded)
//   peakKiB    VmHWM from /proc/self/status, read right after the operation
//   rchar      bytes passed through read(2) during the operation (/proc/self/io)
//   readBytes  bytes fetched from storage during it (page-cache misses)
//   sig        what the agreement check compares (computed after the peak is read)
// Arguments: BENCH_SCALE_ARGS = {"impl": "reference"|"ours", "op": key, ...the op's parameters}.
import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { hashEach } from "./agree.mjs";
import { loadImpl, peakKiB } from "./impls.mjs";

const P = JSON.parse(process.env.BENCH_SCALE_ARGS);

function io() {
  try {
    const t = readFileSync("/proc/self/io", "utf8");
    return { rchar: Number(/rchar: (\d+)/.exec(t)[1]), readBytes: Number(/read_bytes: (\d+)/.exec(t)[1]) };
  } catch {
    return { rchar: Number.NaN, readBytes: Number.NaN };
  }
}

/** The listing, normalised: sorted by path, the fields both must agree on. */
function listSig(infos) {
  const rows = infos
    .map((s) => [s.path, s.id, s.messageCount, s.firstMessage, s.name ?? null, s.modified?.getTime?.() ?? null])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { sessions: rows.length, rows: hashEach(rows) };
}

/** Lines of a written file, counted in chunks (no whole-file string). */
function countLines(path) {
  if (!path || !existsSync(path)) return null;
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(8 << 20);
  let n = 0;
  try {
    for (let got; (got = readSync(fd, buf, 0, buf.length, null)) > 0; )
      for (let i = buf.indexOf(10, 0); i !== -1 && i < got; i = buf.indexOf(10, i + 1)) n++;
  } finally {
    closeSync(fd);
  }
  return n;
}

function contextSig(ctx) {
  const h = createHash("sha1");
  for (const m of ctx.messages) h.update(`${JSON.stringify(m)}\n`);
  return { contextMessages: ctx.messages.length, contextHash: h.digest("hex").slice(0, 16) };
}

const openSig = (sm) => ({ entries: sm.getEntries().length, leafId: sm.getLeafId() });

// Each op: prepare (untimed, may return state) and run (timed); sig(result, state).
const OPS = {
  list: { run: (SM) => SM.list(P.cwd, P.dir), sig: listSig },
  listAll: { run: (SM) => SM.listAll(), sig: listSig },
  continueRecent: {
    run: (SM) => SM.continueRecent(P.cwd, P.dir),
    sig: (sm) => ({ file: sm.getSessionFile(), entries: sm.getEntries().length }),
  },
  findById: { run: (SM) => SM.findById(P.cwd, P.id, P.dir), sig: (path) => ({ path }) },
  open: { run: (SM) => SM.open(P.file, P.tmp), sig: openSig },
  context: {
    run: (SM) => {
      const sm = SM.open(P.file, P.tmp);
      return { sm, ctx: sm.buildSessionContext() };
    },
    sig: ({ sm, ctx }) => ({ ...openSig(sm), ...contextSig(ctx) }),
  },
  // What pi does on every turn of a resumed session: every entry of the branch, and the list.
  materialise: {
    run: (SM) => {
      const sm = SM.open(P.file, P.tmp);
      return { branch: sm.getBranch(), entries: sm.getEntries() };
    },
    sig: ({ branch, entries }) => ({ branch: branch.length, entries: hashEach(entries.map((e) => e.id)) }),
  },
  branch: {
    prepare: (SM) => SM.open(P.file, P.tmp),
    run: (_SM, sm) => sm.getBranch(),
    sig: (b) => ({ branch: b.length, first: b[0]?.id, last: b.at(-1)?.id }),
  },
  append: {
    prepare: (SM) => SM.open(P.file, P.tmp),
    run: (_SM, sm) => {
      for (let i = 0; i < 1000; i++)
        sm.appendMessage({ role: "user", content: [{ type: "text", text: `scale append ${i}` }], timestamp: 1 });
      return sm;
    },
    sig: (sm) => ({ entries: sm.getEntries().length, fileLines: countLines(P.file) }),
  },
  fork: {
    run: (SM) => SM.forkFrom(P.file, P.cwd, P.tmp),
    sig: (sm) => ({ entries: sm.getEntries().length, fileLines: countLines(sm.getSessionFile()) }),
  },
  branched: {
    prepare: (SM) => SM.open(P.file, P.tmp),
    run: (_SM, sm) => ({ path: sm.createBranchedSession(P.midId), sm }),
    // The labels a branch re-creates get new random ids: a label leaf is named by its target.
    sig: ({ path, sm }) => {
      const leaf = sm.getLeafEntry();
      const leafOf = leaf?.type === "label" ? `label of ${leaf.targetId}` : leaf?.id;
      return { entries: sm.getEntries().length, leaf: leafOf, fileLines: countLines(path) };
    },
  },
};

const op = OPS[P.op];
if (!op) throw new Error(`unknown op ${P.op}`);
const { mod } = await loadImpl(P.impl);
const SM = mod.SessionManager;
const state = await op.prepare?.(SM);
const before = io();
const t0 = performance.now();
const result = await op.run(SM, state);
const ms = performance.now() - t0;
const after = io();
const peak = peakKiB();
const sig = op.sig(result, state);
process.stdout.write(
  `${JSON.stringify({ ms, peakKiB: peak, rchar: after.rchar - before.rchar, readBytes: after.readBytes - before.readBytes, sig })}\n`,
);
