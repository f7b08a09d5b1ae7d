// pi-sessions prune / archive / restore / rm, judged by pi 1.6.0's own SessionManager.
//
// Sessions are written by the reference class itself (seeded random turns, branches, labels set and
// cleared, names, compactions, context edits, branch summaries), plus hand-written compactions with a
// `retainedTail` (the seed format's checkpoint, which 1.6.0 does not write itself). Then:
// - prune: the reference, opening the pruned file, gives the same getBranch() ids, buildSessionContext(),
//   getSessionName(), labels of the path's entries and leaf as on the original;
// - archive --older-than then restore --all: the same bytes (sha256) and mtimes, and the same
//   SessionManager.list(); list() without the archived sessions in between;
// - rm: the session is gone from list().
//
// The CLI binary: $PI_SESSIONS_BIN, else target/release/pi-sessions, built once with cargo if missing (as
// bin/pi-sessions.js does).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { corpus } from "../helpers/corpus.mjs";
import { hasParentCycle } from "../helpers/cycles.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const REF_URL = new URL(
  "../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js",
  import.meta.url,
).href;
const { SessionManager } = await import(REF_URL);
const ours = createRequire(import.meta.url)("../../index.js");

const repo = fileURLToPath(new URL("../..", import.meta.url));
let bin = process.env.PI_SESSIONS_BIN || join(repo, "target", "release", "pi-sessions");

beforeAll(() => {
  if (existsSync(bin)) return;
  const r = spawnSync("cargo", ["build", "--release", "--bin", "pi-sessions"], { cwd: repo, stdio: "inherit" });
  if (r.status !== 0) throw new Error("cannot build pi-sessions");
  bin = join(repo, "target", "release", "pi-sessions");
}, 600_000);

function cli(agent, args) {
  const r = spawnSync(bin, ["--agent-dir", agent, ...args], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, XDG_DATA_HOME: join(agent, ".xdg") },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function rng(seed) {
  let s = seed * 2654435761 + 1;
  return (n) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return Math.floor((s / 2147483648) * n);
  };
}

const DAY = 86_400_000;
const OLD = Date.now() - 30 * DAY;

/** A session written by the reference, with a random history (`tails`: with hand-written retainedTail compactions); returns its file. */
function generate(dir, cwd, seed, steps, tails = true) {
  const r = rng(seed);
  let sm = SessionManager.create(cwd, dir);
  let t = OLD + seed * 1000;
  const ids = () => sm.getEntries().map((e) => e.id);
  const messages = () =>
    sm
      .getEntries()
      .filter((e) => e.type === "message")
      .map((e) => e.id);
  sm.appendMessage({ role: "user", content: `first question ${seed}`, timestamp: t++ });
  for (let i = 0; i < steps; i++) {
    const roll = r(100);
    const msgs = messages();
    if (roll < 12) {
      sm.branch(msgs[r(msgs.length)]);
      sm.appendMessage({ role: "user", content: `branch ${i}`, timestamp: t++ });
    } else if (roll < 22) {
      const all = ids();
      sm.appendLabelChange(all[r(all.length)], r(5) === 0 ? undefined : `mark ${i}`);
    } else if (roll < 27) {
      sm.appendSessionInfo(r(4) === 0 ? "" : `Name ${i}`);
    } else if (roll < 31) {
      const path = sm.getBranch().map((e) => e.id);
      sm.appendCompaction(`summary ${i}`, path[r(path.length)], 1000 + i);
    } else if (roll < 34 && tails) {
      // A compaction with a retainedTail, as newer pi writes it: by hand, then reopen.
      const file = sm.getSessionFile();
      const line = {
        type: "compaction",
        id: `rt${seed}x${i}`,
        parentId: sm.getLeafId(),
        timestamp: new Date(t++).toISOString(),
        summary: `checkpoint ${i}`,
        firstKeptEntryId: sm.getLeafId(),
        tokensBefore: 5000 + i,
        retainedTail: [{ role: "user", content: `tail ${i}`, timestamp: t++ }],
      };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
      sm = SessionManager.open(file, dir);
    } else if (roll < 40) {
      const branch = sm
        .getBranch()
        .filter((e) => e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role));
      if (branch.length) {
        const target = branch[r(branch.length)].id;
        sm.appendContextEdit(target, r(3) === 0 ? null : { content: `edited ${i}` });
      }
    } else if (roll < 43) {
      sm.appendModelChange(`p${r(3)}`, `m${i}`);
    } else if (roll < 46) {
      sm.appendCustomMessageEntry("note", `note ${i}`, true);
    } else if (roll < 49) {
      sm.branchWithSummary(msgs[r(msgs.length)], `left branch ${i}`);
    } else if (roll < 75) {
      sm.appendMessage({ role: "user", content: [{ type: "text", text: `question ${i} "q" é` }], timestamp: t++ });
    } else {
      sm.appendMessage({
        role: "assistant",
        content: [{ type: "text", text: `answer ${i}` }],
        provider: "anthropic",
        model: "m",
        usage: { input: i, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: i + 2, cost: { total: 0.5 } },
        stopReason: "stop",
        timestamp: t++,
      });
    }
  }
  const file = sm.getSessionFile();
  // Not "in use": the CLI refuses files changed in the last minute.
  const old = new Date(Date.now() - 2 * 3600_000);
  utimesSync(file, old, old);
  return file;
}

/** What pi reads of a session. */
function view(file) {
  const sm = SessionManager.open(file);
  const branch = sm.getBranch();
  return {
    branch: branch.map((e) => e.id),
    context: sm.buildSessionContext(),
    name: sm.getSessionName(),
    labels: branch.map((e) => [e.id, sm.getLabel(e.id)]),
    leaf: sm.getLeafId(),
  };
}

const sha = (f) => createHash("sha256").update(readFileSync(f)).digest("hex");

function files(dir) {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => n.endsWith(".jsonl"))
        .sort()
        .map((n) => join(dir, n))
    : [];
}

/** `pi-sessions context --json`'s text for these messages: one JSON.stringify per message. */
const contextJson = (messages) =>
  messages.length ? `[\n${messages.map((m) => JSON.stringify(m)).join(",\n")}\n]\n` : "[]\n";

describe("pi-sessions context, judged by pi 1.6.0 and by this library", () => {
  // The CLI builds context messages as JSON text (core/projection.rs), the library as the caller's objects
  // (lib/context.js); both take the entries from the core's one context rule. This compares their bytes.
  it("context --json is JSON.stringify of buildSessionContext().messages on random sessions and the corpus", () => {
    const agent = makeTempRoot("context");
    const dir = join(agent, "sessions", "--work-context--");
    mkdirSync(dir, { recursive: true });
    let againstRef = 0;
    const check = (file, label) => {
      const r = cli(agent, ["context", file, "--json"]);
      const text = readFileSync(file, "utf8");
      const expected = (impl) => contextJson(impl.SessionManager.open(file, dir).buildSessionContext().messages);
      expect(r.code, `${label}: ${r.stderr}`).toBe(0);
      expect(r.stdout, `${label} (library)`).toBe(expected(ours));
      // pi 1.6.0 does not know the seed format's retainedTail checkpoint.
      if (!text.includes('"retainedTail"')) {
        expect(r.stdout, `${label} (pi 1.6.0)`).toBe(expected({ SessionManager }));
        againstRef++;
      }
    };
    for (let seed = 1; seed <= 40; seed++) {
      const tails = seed % 2 === 0;
      check(generate(dir, "/work/context", seed, 20 + ((seed * 17) % 90), tails), `seed ${seed}`);
    }
    expect(againstRef).toBeGreaterThan(20);
    // The adversarial corpus (files without a parent cycle, where pi hangs). The CLI copies the values pi passes
    // through as the file writes them (whitespace, escapes): the same values, and mostly the same bytes.
    let bytes = 0;
    let compared = 0;
    for (const c of corpus()) {
      if (hasParentCycle(c.bytes)) continue;
      const file = join(dir, c.name);
      writeFileSync(file, c.bytes);
      const r = cli(agent, ["context", file, "--json"]);
      // The reference opens a copy: it rewrites a file it migrates.
      writeFileSync(`${file}.copy`, c.bytes);
      let messages;
      try {
        messages = SessionManager.open(`${file}.copy`, dir).buildSessionContext().messages;
      } catch {
        expect(r.code, `${c.name}: pi fails, the CLI too`).not.toBe(0);
        continue;
      }
      if (r.code !== 0) {
        // Not a session for the CLI: a file that is not a session (pi starts an empty one).
        expect(r.stderr, c.name).toContain("is not a session file");
        continue;
      }
      compared++;
      expect(JSON.parse(r.stdout), c.name).toEqual(JSON.parse(contextJson(messages)));
      if (r.stdout === contextJson(messages)) bytes++;
    }
    expect(compared).toBeGreaterThan(70);
    expect(bytes).toBeGreaterThan(compared - 5);
  });
});

describe("pi-sessions prune, judged by pi 1.6.0", () => {
  it("keeps branch, context, name, labels and leaf on random sessions", () => {
    const agent = makeTempRoot("prune");
    const dir = join(agent, "sessions", "--work-prune--");
    mkdirSync(dir, { recursive: true });
    let changed = 0;
    let offPath = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const file = generate(dir, "/work/prune", seed, 20 + ((seed * 13) % 80));
      const before = view(file);
      const original = readFileSync(file);
      const r = cli(agent, ["prune", file, "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout);
      expect(view(file), `seed ${seed}`).toEqual(before);
      if (report.changed) {
        changed++;
        expect(readFileSync(report.backup).equals(original)).toBe(true);
      }
      offPath += report.keptOffPath.length;
      // Every kept line is a line of the original, or one whose only change is its parentId.
      const lines = new Set(original.toString("utf8").split("\n"));
      for (const line of readFileSync(file, "utf8").split("\n")) {
        if (lines.has(line)) continue;
        const e = JSON.parse(line);
        const old = [...lines].map((l) => (l ? JSON.parse(l) : null)).find((o) => o && o.id === e.id);
        expect({ ...e, parentId: 0 }).toEqual({ ...old, parentId: 0 });
      }
    }
    expect(changed).toBeGreaterThan(20);
    expect(offPath).toBeGreaterThan(3);
  });

  it("--dry-run changes nothing", () => {
    const agent = makeTempRoot("dry");
    const dir = join(agent, "sessions", "--work-dry--");
    mkdirSync(dir, { recursive: true });
    const file = generate(dir, "/work/dry", 99, 60);
    const before = [sha(file), statSync(file).mtimeMs];
    const r = cli(agent, ["prune", file, "--dry-run", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).dryRun).toBe(true);
    expect([sha(file), statSync(file).mtimeMs]).toEqual(before);
    expect(readdirSync(dir)).toEqual([file.split("/").pop()]);
  });
});

describe("pi-sessions archive / restore / rm, judged by pi 1.6.0", () => {
  it("archive --older-than then restore --all gives the same bytes and list()", async () => {
    const agent = makeTempRoot("archive");
    const cwd = "/work/arch";
    const dir = join(agent, "sessions", "--work-arch--");
    mkdirSync(dir, { recursive: true });
    for (let seed = 1; seed <= 8; seed++) generate(dir, cwd, 200 + seed, 40);
    // One session with recent activity stays.
    const fresh = SessionManager.create(cwd, dir);
    fresh.appendMessage({ role: "user", content: "fresh", timestamp: Date.now() });
    const freshFile = fresh.getSessionFile();
    const old = new Date(Date.now() - 2 * 3600_000);
    utimesSync(freshFile, old, old);

    const list = async () => JSON.parse(JSON.stringify(await SessionManager.list(cwd, dir)));
    const listed = await list();
    const sums = files(dir).map((f) => [f, sha(f), statSync(f).mtimeMs]);

    const a = cli(agent, ["archive", "--older-than", "7", "--cwd", cwd, "--json"]);
    expect(a.code, a.stderr).toBe(0);
    const report = JSON.parse(a.stdout);
    expect(report.archived.length).toBe(8);
    expect(report.ratio).toBeGreaterThan(1);
    expect((await list()).map((s) => s.path)).toEqual([freshFile]);
    const archived = JSON.parse(cli(agent, ["ls", "--cwd", cwd, "--archived", "--json"]).stdout);
    expect(archived.length).toBe(8);

    const r = cli(agent, ["restore", "--all", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).restored.length).toBe(8);
    expect(files(dir).map((f) => [f, sha(f), statSync(f).mtimeMs])).toEqual(sums);
    expect(await list()).toEqual(listed);
  });

  it("rm takes a session out of list(); a held or unknown one is refused", async () => {
    const agent = makeTempRoot("rm");
    const cwd = "/work/rm";
    const dir = join(agent, "sessions", "--work-rm--");
    mkdirSync(dir, { recursive: true });
    const a = generate(dir, cwd, 301, 20);
    const b = generate(dir, cwd, 302, 20);
    const id = SessionManager.open(a).getSessionId();
    const r = cli(agent, ["rm", id]);
    expect(r.code, r.stderr).toBe(0);
    expect((await SessionManager.list(cwd, dir)).map((s) => s.path)).toEqual([b]);
    const now = new Date();
    utimesSync(b, now, now);
    const held = cli(agent, ["rm", "--permanent", b]);
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(/in use/);
    expect(existsSync(b)).toBe(true);
    const missing = cli(agent, ["rm", "no-such-session"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.split("\n")[0]).toMatch(/no-such-session/);
    const bad = cli(agent, ["archive"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n")[0]).toMatch(/older-than/);
  });
});
