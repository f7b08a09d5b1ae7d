// The persistent listing index (the core's listing/index/) against the reference, across processes.
//
// Every listing here runs in a fresh Node process (as `pi --resume` does), on one folder that
// holds the adversarial corpus plus plain sessions: the reference lists it from the files, ours
// with its index cold, warm, damaged in each way, after each kind of change to a file, with two
// processes listing at once, unwritable, and turned off. listAll (with its progress sequence),
// list, findById and continueRecent must give the reference's answers every time; where the
// index should have served the listing, the process must also have read only a fraction of the
// folder's bytes (so a test that passed without the index being used would fail).
import { spawn, spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { CWD, corpus } from "../helpers/corpus.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const CHILD = fileURLToPath(new URL("../helpers/list-child.mjs", import.meta.url));
const root = makeTempRoot("list-index");
const dir = join(root, "sessions", "--project--");
const indexDir = join(root, "index");
const MTIME_BASE = 1_650_000_000;

const J = JSON.stringify;
const message = (id, parentId, role, text, n) => ({
  type: "message",
  id,
  parentId,
  timestamp: new Date(Date.UTC(2024, 1, 1) + n * 1000).toISOString(),
  message: {
    role,
    content: role === "user" ? text : [{ type: "text", text }],
    timestamp: Date.UTC(2024, 1, 1) + n * 1000,
  },
});

/** Plain sessions with enough text that reading them shows in the process's read bytes. */
function plain(i) {
  const sid = `plain-${i}`;
  const lines = [
    J({ type: "session", version: 3, id: sid, timestamp: `2024-02-0${(i % 9) + 1}T10:00:00.000Z`, cwd: CWD }),
  ];
  let parent = null;
  for (let k = 0; k < 40; k++) {
    const id = `${sid}-m${k}`;
    const text = `message ${k} of session ${i}: ${"lorem ipsum dolor sit amet ".repeat(20)}`;
    lines.push(J(message(id, parent, k % 2 === 0 ? "user" : "assistant", text, i * 100 + k)));
    parent = id;
  }
  return `${lines.join("\n")}\n`;
}

const late = (id, parent, text) => `${J(message(id, parent, "user", text, 9999))}\n`;

function folderBytes() {
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

const ids = [];

function run(impl, env = {}) {
  const r = spawnSync(process.execPath, [CHILD, impl, dir, CWD, ...ids], {
    encoding: "utf8",
    env: { ...process.env, PI_SESSION_NATIVE_INDEX_DIR: indexDir, PI_SESSION_NATIVE_INDEX_SETTLE_MS: "0", ...env },
    maxBuffer: 256 << 20,
  });
  if (r.status !== 0) throw new Error(`${impl} child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function runAsync(impl, env = {}) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [CHILD, impl, dir, CWD, ...ids], {
      env: { ...process.env, PI_SESSION_NATIVE_INDEX_DIR: indexDir, PI_SESSION_NATIVE_INDEX_SETTLE_MS: "0", ...env },
    });
    let out = "";
    let err = "";
    c.stdout.setEncoding("utf8");
    c.stderr.setEncoding("utf8");
    c.stdout.on("data", (d) => (out += d));
    c.stderr.on("data", (d) => (err += d));
    c.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${code}: ${err}`))));
  });
}

const indexFiles = () => (existsSync(indexDir) ? readdirSync(indexDir).filter((f) => f.endsWith(".idx")) : []);
const indexFile = () => join(indexDir, indexFiles()[0]);

/** Where two JSON values first differ (a path and both sides), or null. */
function firstDiff(a, b, path = "") {
  if (J(a) === J(b)) return null;
  if (a && b && typeof a === "object" && typeof b === "object") {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDiff(a[k], b[k], `${path}/${k}`);
      if (d) return d;
    }
  }
  return { path, ours: J(a)?.slice(0, 300), ref: J(b)?.slice(0, 300) };
}

/** The reference's answers, listed again only when the folder changed. */
let refCache = { key: "", out: null };
function refOut() {
  const key = readdirSync(dir)
    .map((f) => {
      const st = statSync(join(dir, f));
      return `${f}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    })
    .join("|");
  if (refCache.key !== key) refCache = { key, out: run("ref").out };
  return refCache.out;
}

/** Ours in a fresh process equals the reference; `warm`: ours read under 10% of the folder. */
function agrees(label, { warm, env } = {}) {
  const ref = { out: refOut() };
  const got = run("ours", env);
  expect(firstDiff(got.out, ref.out), label).toBeNull();
  // The share read comes from /proc/self/io. Under wine that counts wine's own reads too (~1.4
  // MB during a listing of this folder), so on Windows only the answers are compared.
  if (warm !== undefined && process.platform !== "win32") {
    const share = got.rchar / folderBytes();
    if (warm) expect(share, `${label}: ours read ${got.rchar} bytes`).toBeLessThan(0.1);
    else expect(share, `${label}: ours read ${got.rchar} bytes`).toBeGreaterThan(0.5);
  }
  return got;
}

beforeAll(() => {
  mkdirSync(dir, { recursive: true });
  // The corpus without its few multi-MiB files (the cold listing tests read those): what
  // matters here is every kind of row the index stores.
  for (const [i, f] of corpus()
    .filter((f) => f.bytes.length < 2e6)
    .entries()) {
    const p = join(dir, f.name);
    writeFileSync(p, f.bytes);
    utimesSync(p, MTIME_BASE + i * 10, MTIME_BASE + i * 10);
  }
  for (let i = 0; i < 8; i++) writeFileSync(join(dir, `2024-02-0${i + 1}T10-00-00-000Z_plain-${i}.jsonl`), plain(i));
  writeFileSync(join(dir, "notes.txt"), "not a session\n");
  ids.push("plain-0", "plain-5", "no-such-id");
});

describe("the listing index, in fresh processes, against the reference", () => {
  it("cold, then warm: the same answers, and the warm run reads the index instead of the files", () => {
    rmSync(indexDir, { recursive: true, force: true });
    agrees("cold", { warm: false });
    expect(indexFiles()).toHaveLength(1);
    const size = statSync(indexFile()).size;
    expect(size).toBeLessThan(folderBytes() * 0.25);
    agrees("warm", { warm: true });
    // The read-bytes check can fail: with the index off, the same process reads the folder.
    agrees("index off", { warm: false, env: { PI_SESSION_NATIVE_INDEX: "0" } });
  });

  it("files changed in every way: each change is seen, the rest still come from the index", () => {
    const p = (name) => join(dir, name);
    const plainName = (i) => `2024-02-0${i + 1}T10-00-00-000Z_plain-${i}.jsonl`;
    // A whole-second mtime, which utimes can set back exactly (it takes seconds as a double).
    utimesSync(p(plainName(1)), MTIME_BASE, MTIME_BASE);
    agrees("before the changes");
    agrees("warm before the changes", { warm: true });
    const changes = [
      ["appended", () => appendFileSync(p(plainName(0)), late("late", "plain-0-m39", "a late question"))],
      [
        "rewritten with the same size and the mtime set back",
        () => {
          const st = statSync(p(plainName(1)), { bigint: true });
          writeFileSync(p(plainName(1)), readFileSync(p(plainName(1)), "utf8").replace("message 3 ", "MESSAGE 3 "));
          utimesSync(p(plainName(1)), MTIME_BASE, MTIME_BASE);
          const now = statSync(p(plainName(1)), { bigint: true });
          // Only the ctime tells this file changed.
          expect([now.ino, now.size, now.mtimeNs]).toEqual([st.ino, st.size, st.mtimeNs]);
        },
      ],
      [
        "replaced by a rename",
        () => {
          writeFileSync(p("tmp.new"), plain(20).replaceAll("plain-20", "plain-2"));
          renameSync(p("tmp.new"), p(plainName(2)));
        },
      ],
      ["truncated mid-line", () => truncateSync(p(plainName(3)), Math.floor(statSync(p(plainName(3))).size / 2) + 7)],
      ["deleted", () => rmSync(p(plainName(4)))],
      [
        "added",
        () => writeFileSync(p("2024-03-01T10-00-00-000Z_plain-9.jsonl"), plain(9).replaceAll("plain-9", "plain-new")),
      ],
      ["renamed", () => renameSync(p(plainName(6)), p("2024-01-01T00-00-00-000Z_renamed.jsonl"))],
      ["emptied", () => writeFileSync(p(plainName(7)), "")],
    ];
    for (const [what, change] of changes) {
      change();
      agrees(`${what} (index of the state before)`, { warm: true });
      agrees(`${what} (index rewritten)`, { warm: true });
    }
  });

  it("a damaged, foreign or partial index is ignored and rebuilt", () => {
    run("ours");
    agrees("warm", { warm: true });
    const good = readFileSync(indexFile());
    const damages = [
      ["truncated", good.subarray(0, Math.floor(good.length / 2))],
      ["empty", Buffer.alloc(0)],
      ["garbage", Buffer.from("not an index at all\n".repeat(100))],
      ["another format version", Buffer.concat([good.subarray(0, 8), Buffer.from([9, 0, 0, 0]), good.subarray(12)])],
      [
        "one bit flipped in the compressed rows",
        (() => {
          const b = Buffer.from(good);
          b[Math.floor(b.length * 0.7)] ^= 0x10;
          return b;
        })(),
      ],
      ["one byte more", Buffer.concat([good, Buffer.from([0])])],
    ];
    for (const [what, bytes] of damages) {
      writeFileSync(indexFile(), bytes);
      agrees(`${what}: read from the files`, { warm: false });
      agrees(`${what}: rebuilt`, { warm: true });
    }
  });

  it("two processes listing at once both answer right, and leave a good index", async () => {
    rmSync(indexDir, { recursive: true, force: true });
    const ref = { out: refOut() };
    const [a, b] = await Promise.all([runAsync("ours"), runAsync("ours")]);
    expect(firstDiff(a.out, ref.out)).toBeNull();
    expect(firstDiff(b.out, ref.out)).toBeNull();
    expect(indexFiles()).toHaveLength(1);
    expect(readdirSync(indexDir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    agrees("after both", { warm: true });
  });

  it("an index that cannot be written, or is turned off, costs speed only", () => {
    const aFile = join(root, "a-file");
    writeFileSync(aFile, "x");
    agrees("unwritable index dir", { warm: false, env: { PI_SESSION_NATIVE_INDEX_DIR: join(aFile, "index") } });
    const off = join(root, "off");
    agrees("off", { warm: false, env: { PI_SESSION_NATIVE_INDEX: "0", PI_SESSION_NATIVE_INDEX_DIR: off } });
    agrees("off, again", { warm: false, env: { PI_SESSION_NATIVE_INDEX: "0", PI_SESSION_NATIVE_INDEX_DIR: off } });
    expect(existsSync(off)).toBe(false);
  });

  it("files changed moments ago are not recorded (a change within the same timestamp tick would go unseen)", () => {
    const fresh = join(root, "fresh-index");
    const env = { PI_SESSION_NATIVE_INDEX_DIR: fresh, PI_SESSION_NATIVE_INDEX_SETTLE_MS: "" };
    // Every file of the folder was written by this test run, less than the default 2 s ago
    // for some: those are read from the files again by the next process.
    const f = join(dir, "2024-02-06T10-00-00-000Z_plain-5.jsonl");
    appendFileSync(f, late("now", "plain-5-m39", "just now"));
    agrees("settle: first", { env });
    const second = agrees("settle: second", { env });
    // plain-5 alone is read again (the others are older than the settle time, or not).
    expect(second.rchar).toBeGreaterThanOrEqual(statSync(f).size);
  });
});
