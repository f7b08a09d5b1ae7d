// Differential test: the answers that come from the JS runtime rather than from ECMAScript
// (lib/runtime.js), on Node (vitest) and under Bun (scripts/bun.mjs runs this file with
// `bun test`, against the reference under the same Bun):
//   - equal mtimes keep the runtime's readdir order (libuv sorts names by bytes, Bun lists
//     the directory's own order): continueRecent, findMostRecentSession, findById, list,
//     listAll, with a symlink to a session and duplicate header ids;
//   - `modified` falls back to the file's `stats.mtime`, which Node rounds to the
//     millisecond and Bun truncates;
//   - TypeErrors from property accesses on caller data (JavaScriptCore's text quotes the
//     expression): inMemory over non-object entries, session names that are not strings;
//   - fs errors: message and the order of their own keys;
//   - listed files whose lines hold U+2028 and U+2029 (Bun's readline splits there, Node's
//     does not): the same rows;
//   - names readdir decodes lossily (not UTF-8), files whose stat fails, equal mtimes only
//     `localeCompare` orders: listAll, list, findById, findMostRecentSession.
import { mkdirSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { assertSame } from "../helpers/compare.mjs";
import { IMPLS } from "../helpers/impls.mjs";
import { capture, captureAsync, Normalizer, normCapture } from "../../support/normalize.mjs";
import { snapshotManager } from "../helpers/snapshot.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const LABELS = IMPLS.map((i) => i.name);
const root = makeTempRoot("runtime");
const CWD = "/tmp/pi-diff-cwd/runtime";
const ID = "01a22d64-0000-7000-8000-00000000000a";
const MTIME = 1_650_000_000; // seconds (2022: outside the normaliser's "now" window)

const header = (id, extra = {}) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2024-01-01T00:00:00.000Z", cwd: CWD, ...extra })}\n`;
const message = (text) =>
  `${JSON.stringify({ type: "message", id: "b0000001", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", message: { role: "user", content: text, timestamp: 1_704_067_200_000 } })}\n`;

/** Runs `fn(ctx)` for each implementation in its own folder; returns the results. */
async function each(label, fn) {
  const out = [];
  for (const impl of IMPLS) {
    const base = join(root, label, impl.name);
    mkdirSync(base, { recursive: true });
    const agent = join(base, "agent");
    process.env.PI_CODING_AGENT_DIR = agent;
    const norm = new Normalizer().addRoot(base);
    out.push(await fn({ base, agent, norm, mod: impl.mod, SM: impl.mod.SessionManager }));
  }
  return out;
}

// Names whose byte order, collation order and a hashed directory order all disagree.
const TIED = ["v3", "B", "a", "_c", "z", "0", "Ab", "a-b", "m", "aa", "Zz", "x.y"];

function tiedFolder(dir) {
  mkdirSync(dir, { recursive: true });
  for (const [i, name] of TIED.entries()) {
    const p = join(dir, `${name}.jsonl`);
    // every other file has the same header id; all have the same mtime
    writeFileSync(p, header(i % 2 ? `${ID.slice(0, -2)}${String(i).padStart(2, "0")}` : ID) + message(`m${i}`));
    utimesSync(p, MTIME, MTIME);
  }
  // a symlink to a session: same header, same mtime (stat follows it)
  symlinkSync(join(dir, "v3.jsonl"), join(dir, "link.jsonl"));
  writeFileSync(join(dir, "notes.txt"), "not a session\n");
}

describe(`runtime-dependent answers (${LABELS.join(" vs ")})`, () => {
  it("equal mtimes keep the runtime's readdir order", async () => {
    const recs = await each("ties", async ({ base, agent, norm, mod, SM }) => {
      const dir = join(base, "s");
      tiedFolder(dir);
      // two project folders in the agent dir with the same names and mtimes (listAll's ties)
      for (const project of ["--p-one--", "--p-two--", "--P-three--"]) tiedFolder(join(agent, "sessions", project));
      const rel = (v) => (typeof v === "string" ? relative(base, v) : v);
      const paths = (infos) => infos.map((i) => rel(i.path));
      return norm.value({
        readdir: readdirSync(dir),
        continueRecent: rel(SM.continueRecent(CWD, dir).getSessionFile()),
        mostRecent: [rel(mod.findMostRecentSession(dir)), rel(mod.findMostRecentSession(dir, CWD))],
        findById: [rel(SM.findById(CWD, ID, dir)), rel(SM.findById("/elsewhere", ID, dir))],
        list: paths(await SM.list(CWD, dir)),
        listAllDir: paths(await SM.listAll(dir)),
        listAll: paths(await SM.listAll()),
      });
    });
    assertSame(recs[0], recs[1], "ties", LABELS);
  });

  it("names that are not UTF-8, stats that fail, ties only ICU orders", async () => {
    const recs = await each("odd-names", async ({ base, agent, norm, mod, SM }) => {
      const sessions = join(agent, "sessions");
      const dir = join(sessions, "--p-odd--");
      mkdirSync(dir, { recursive: true });
      // Equal `modified` everywhere: the listings keep discovery's order, which shows.
      const write = (path, i, mtime) => {
        writeFileSync(path, header(`${ID.slice(0, -2)}${String(i).padStart(2, "0")}`) + message(`m${i}`));
        utimesSync(path, mtime, mtime);
      };
      // readdir gives "a\uFFFD.jsonl" twice: both stat and read the file of that name, the raw one
      // newer (listed twice by its twin's mtime, after "mid"); the raw ones of "b" and "c" fail.
      write(join(dir, "a\uFFFD.jsonl"), 1, MTIME);
      write(Buffer.from(`${dir}/a\xff.jsonl`, "latin1"), 2, MTIME + 20);
      write(Buffer.from(`${dir}/b\xfe\xff.jsonl`, "latin1"), 3, MTIME + 30);
      write(Buffer.from(`${dir}/c\xc3.jsonl`, "latin1"), 4, MTIME + 30);
      write(join(dir, "mid.jsonl"), 5, MTIME + 10);
      // stat fails: -Infinity, last (three, tied)
      for (const n of ["x", "Y", "_z"]) symlinkSync(join(dir, "missing"), join(dir, `${n}.jsonl`));
      // ties only ICU orders, in two folders: byte order e < f < é, localeCompare e < é < f
      for (const project of ["--p-e--", "--p-f--"]) {
        mkdirSync(join(sessions, project));
        for (const [i, n] of ["é", "f", "e", "Ö", "o"].entries())
          write(join(sessions, project, `${n}.jsonl`), 10 + i, MTIME);
      }
      // a folder whose name is not UTF-8: readdir of its decoded name fails, no files
      mkdirSync(Buffer.from(`${sessions}/--p\xff--`, "latin1"));
      write(Buffer.from(`${sessions}/--p\xff--/s.jsonl`, "latin1"), 20, MTIME + 40);
      const rel = (v) => (typeof v === "string" ? relative(base, v) : v);
      // (not the partial lists: which file the reference loads first is a race here)
      const progress = [];
      const listAll = await SM.listAll((loaded, total) => progress.push([loaded, total]));
      return norm.value({
        listAll: listAll.map((i) => rel(i.path)),
        progress,
        list: (await SM.list(CWD, dir)).map((i) => rel(i.path)),
        findById: [2, 3, 5].map((i) => rel(SM.findById(CWD, `${ID.slice(0, -2)}0${i}`, dir))),
        mostRecent: rel(mod.findMostRecentSession(dir)),
        mostRecentE: rel(mod.findMostRecentSession(join(sessions, "--p-e--"))),
      });
    });
    assertSame(recs[0], recs[1], "odd names", LABELS);
    const names = recs[1].listAll.map((p) => p.split(/[\\/]/).pop().replace(".jsonl", ""));
    expect(names).toEqual(["mid", "Ö", "Ö", "o", "o", "f", "f", "é", "é", "e", "e", "a\uFFFD", "a\uFFFD"]);
    expect(recs[1].progress.at(-1)).toEqual([18, 18]);
  });

  it("findById past one batch of headers: the first match that passes the cwd filter", async () => {
    // 600 sessions (the core reads headers 256 at a time and stops after a batch with a
    // match): ID in cwd A at 100, in cwd B at 300 and 520; created out of name order.
    const [A, B, C] = ["/tmp/pi-diff-cwd/a", "/tmp/pi-diff-cwd/b", "/tmp/pi-diff-cwd/c"];
    const folder = (dir) => {
      mkdirSync(dir, { recursive: true });
      for (let k = 0; k < 600; k++) {
        const i = (k * 7) % 600;
        const [id, cwd] = i === 100 ? [ID, A] : i === 300 || i === 520 ? [ID, B] : [`${ID.slice(0, -4)}${i + 1000}`, A];
        writeFileSync(join(dir, `${String(i).padStart(4, "0")}.jsonl`), header(id, { cwd }) + message(`m${i}`));
      }
    };
    const recs = await each("by-id", async ({ base, agent, norm, SM }) => {
      const dir = join(base, "s");
      folder(dir);
      // C's default folder: no cwd filter, the first match whatever its cwd
      folder(join(agent, "sessions", "--tmp-pi-diff-cwd-c--"));
      const rel = (v) => (typeof v === "string" ? relative(base, v) : v);
      return norm.value({
        filtered: [A, B, C].map((cwd) => rel(SM.findById(cwd, ID, dir))),
        other: rel(SM.findById(B, `${ID.slice(0, -4)}1599`, dir)),
        defaultDir: [rel(SM.findById(C, ID)), rel(SM.findById(C, `${ID.slice(0, -4)}1599`))],
      });
    });
    assertSame(recs[0], recs[1], "by-id", LABELS);
    expect(recs[1].filtered).toEqual([join("s", "0100.jsonl"), join("s", "0300.jsonl"), undefined]);
  });

  it("`modified` falls back to the file's mtime as the runtime dates it", async () => {
    const recs = await each("mtime", async ({ base, norm, SM }) => {
      const dir = join(base, "s");
      mkdirSync(dir, { recursive: true });
      // no message, no valid header timestamp: `modified` is `stats.mtime`; .1237 s is
      // 123.7 ms, which Node rounds up and Bun truncates
      const files = [];
      for (const [i, frac] of [0.1237, 0.5, 0.9996].entries()) {
        const p = join(dir, `t${i}.jsonl`);
        writeFileSync(p, header(`${ID.slice(0, -1)}${i}`, { timestamp: "not a date" }));
        utimesSync(p, MTIME + i + frac, MTIME + i + frac);
        files.push(p);
      }
      const times = (infos) => infos.map((i) => [relative(base, i.path), i.modified.getTime()]);
      return {
        stat: files.map((p) => statSync(p).mtime.getTime()),
        list: norm.value(times(await SM.list(CWD, dir))),
        listAll: norm.value(times(await SM.listAll(dir))),
      };
    });
    assertSame(recs[0], recs[1], "mtime", LABELS);
    // the listings give what this runtime's stat gives (the reference's own source of it)
    expect(recs[1].list.map(([, t]) => t).sort()).toEqual([...recs[1].stat].sort());
  });

  it("listings of files whose lines hold U+2028 and U+2029: the same rows", async () => {
    const recs = await each("separators", async ({ base, norm, SM }) => {
      const dir = join(base, "s");
      mkdirSync(dir, { recursive: true });
      const texts = ["one\u2028two", "para\u2029graph", "both \u2028 and \u2029 end\u2028"];
      for (const [i, text] of texts.entries()) {
        const p = join(dir, `sep${i}.jsonl`);
        writeFileSync(p, header(`${ID.slice(0, -1)}${i}`) + message(text) + message(`plain ${i}`));
        utimesSync(p, MTIME + i, MTIME + i);
      }
      // a header that holds one: Node's readline reads one header line, Bun's two pieces
      const p = join(dir, "sep-header.jsonl");
      writeFileSync(p, header(`${ID.slice(0, -1)}9`, { cwd: `${CWD}\u2028x` }) + message("after"));
      utimesSync(p, MTIME + 9, MTIME + 9);
      return norm.value({ list: await SM.list(CWD, dir), listAll: await SM.listAll(dir) });
    });
    assertSame(recs[0], recs[1], "separators", LABELS);
  });

  it("inMemory over entries that are not objects: the same result or the same TypeError", async () => {
    const H = { type: "session", version: 3, id: ID, timestamp: "2024-01-01T00:00:00.000Z", cwd: CWD };
    const V1 = { type: "session", id: ID, timestamp: "2024-01-01T00:00:00.000Z", cwd: CWD };
    const M = JSON.parse(message("hi"));
    const N = (name) => ({ type: "session_info", id: "b0000002", parentId: "b0000001", timestamp: M.timestamp, name });
    const cases = [
      [null],
      [undefined],
      [1, "s", [], true],
      [H, null],
      [H, M, null],
      [H, 5, M],
      [M, null],
      [5, M],
      [V1, null],
      [V1, "x"],
      [H, M, N(5)],
      [H, M, N({})],
      [H, M, N(["a"])],
      [H, M, N(null)],
      [H, M, N("  named  ")],
    ];
    const recs = await each("inmemory", ({ norm, SM }) =>
      cases.map((entries) => {
        const c = capture(() => SM.inMemory(CWD, undefined, structuredClone(entries)));
        if ("error" in c) return normCapture(norm, c);
        return norm.value(snapshotManager(c.value, { perId: "all" }).values);
      }),
    );
    assertSame(recs[0], recs[1], "inMemory", LABELS);
  });

  it("appendSessionInfo and getSessionName on names that are not strings", async () => {
    const recs = await each("names", ({ norm, SM }) =>
      [5, {}, null, undefined, ["x"], "ok"].map((name) => {
        const sm = SM.inMemory(CWD);
        const appended = capture(() => sm.appendSessionInfo(name));
        return normCapture(norm, {
          value: { appended: normCapture(norm, appended), name: capture(() => sm.getSessionName()) },
        });
      }),
    );
    assertSame(recs[0], recs[1], "names", LABELS);
  });

  it("fs errors: the same message and own keys in the same order", async () => {
    const recs = await each("fserrors", async ({ base, norm, mod, SM }) => {
      const dir = join(base, "d.jsonl");
      mkdirSync(dir, { recursive: true });
      const file = join(base, "f");
      writeFileSync(file, "x");
      const cases = {
        openDir: () => SM.open(dir),
        loadDir: () => mod.loadEntriesFromFile(dir),
        forkDir: () => SM.forkFrom(dir, CWD, join(base, "out")),
        createUnderFile: () => SM.create(CWD, join(file, "sub")),
        appendUnderFile: () => {
          const sm = SM.open(join(file, "x.jsonl"));
          sm.appendMessage({ role: "user", content: "x", timestamp: 1 });
          sm.appendMessage({ role: "assistant", content: [], timestamp: 2 });
        },
      };
      const out = {};
      for (const [k, fn] of Object.entries(cases)) {
        const c = await captureAsync(fn);
        out[k] =
          "error" in c
            ? { ...normCapture(norm, c), keys: Object.keys(c.error), fields: norm.value({ ...c.error }) }
            : "no error";
      }
      return out;
    });
    assertSame(recs[0], recs[1], "fs errors", LABELS);
  });
});
