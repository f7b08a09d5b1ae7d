// What other programs do to a session file while a SessionManager has it open, run against pi's class and
// ours with the same assertions: where do the next appends land? The reference opens the path for every
// append (`appendFileSync`), so its lines always land in the file at the path; ours must too (docs/safety.md,
// "The outside world"). Where nothing is at the path (moved away, deleted), ours writes the whole session
// there, where the reference writes headerless lines (pi's #8939): ours is better there, and the test says so.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  appendFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import * as ours from "../../index.js";
import { makeTempRoot } from "../helpers/tmp.mjs";

const ref = await import(
  new URL("../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js", import.meta.url).href
);
const IMPLS = [
  ["ref", ref.SessionManager],
  ["ours", ours.SessionManager],
];
const root = makeTempRoot("outside");

const user = (text) => ({ role: "user", content: text, timestamp: 1 });
const assistant = (text) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  provider: "p",
  model: "m",
  usage: { input: 1, output: 1 },
  stopReason: "stop",
  timestamp: 2,
});

/** The texts of the message entries of a file, `#` for the header, `?` for other entries, `!` for lines that do not parse; [] if missing. */
function shape(path) {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      let e;
      try {
        e = JSON.parse(l);
      } catch {
        return "!";
      }
      if (e.type === "session") return "#";
      const c = e.message?.content;
      return typeof c === "string" ? c : (c?.[0]?.text ?? "?");
    });
}

function rewrite(path, text) {
  const tmp = `${path}.new`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/**
 * The outside changes, each with what it leaves beside the path (`aside`) and the file that is at the path
 * afterwards, as the user sees them. `whole`: the file at the path afterwards is the whole session in ours;
 * the reference writes headerless lines there (pi's #8939).
 */
const CHANGES = [
  {
    name: "an editor's save that keeps file~ (Emacs; vim with backupcopy=no)",
    change: (p) => {
      const text = readFileSync(p);
      renameSync(p, `${p}~`);
      writeFileSync(p, text);
    },
    aside: (p) => `${p}~`,
  },
  {
    name: "a repair that keeps a hard-linked .bak (pi-sessions check --repair)",
    change: (p) => {
      linkSync(p, `${p}.bak`);
      rewrite(p, readFileSync(p));
    },
    aside: (p) => `${p}.bak`,
  },
  { name: "mv away", change: (p) => renameSync(p, `${p}.moved`), aside: (p) => `${p}.moved`, whole: true },
  { name: "rm", change: (p) => rmSync(p), whole: true },
  { name: "a replacement by rename", change: (p) => rewrite(p, readFileSync(p)) },
  { name: "cp over", change: (p) => writeFileSync(p, readFileSync(p)) },
];

describe("an append after another program changed the file lands in the file at the path", () => {
  for (const c of CHANGES) {
    it(c.name, () => {
      const seen = {};
      for (const [name, SM] of IMPLS) {
        const dir = join(root, c.name.replace(/\W+/g, "-"), name);
        mkdirSync(dir, { recursive: true });
        const sm = SM.create("/cwd", dir);
        sm.appendMessage(user("u1"));
        sm.appendMessage(assistant("a1"));
        const p = sm.getSessionFile();
        c.change(p);
        for (const t of ["x1", "x2", "x3"]) sm.appendMessage(user(t));
        seen[name] = { at: shape(p), aside: c.aside ? shape(c.aside(p)) : [] };
        // The session reopens in pi's own class with every entry it should hold.
        try {
          const reopened = ref.SessionManager.open(p, dir);
          seen[name].reopened = reopened.getEntries().map((e) => e.message?.content?.[0]?.text ?? e.message?.content);
        } catch (e) {
          seen[name].reopened = e.message.replace(p, "<file>");
        }
      }
      const before = ["#", "u1", "a1"];
      const lines = ["x1", "x2", "x3"];
      // Nothing went to the file beside the path.
      expect(seen.ours.aside).toEqual(c.aside ? before : []);
      expect(seen.ref.aside).toEqual(seen.ours.aside);
      if (c.whole) {
        // Ours writes the whole session at the path; the reference three headerless lines (#8939).
        expect(seen.ref.at).toEqual(lines);
        expect(seen.ref.reopened).toBe("Session file is not a valid pi session: <file>");
        expect(seen.ours.at).toEqual([...before, ...lines]);
        expect(seen.ours.reopened).toEqual(["u1", "a1", ...lines]);
      } else {
        expect(seen.ours.at).toEqual([...before, ...lines]);
        expect(seen.ours).toEqual(seen.ref);
      }
    });
  }

  it("a symlinked session path whose target an editor saves with a backup", () => {
    const seen = {};
    for (const [name, SM] of IMPLS) {
      const dir = join(root, "symlink", name);
      mkdirSync(dir, { recursive: true });
      const real = join(dir, "real.jsonl");
      const sm0 = SM.create("/cwd", dir);
      sm0.appendMessage(user("u1"));
      sm0.appendMessage(assistant("a1"));
      renameSync(sm0.getSessionFile(), real);
      const link = join(dir, "link.jsonl");
      symlinkSync(real, link);
      const sm = SM.open(link, dir);
      sm.appendMessage(user("x1"));
      const text = readFileSync(real);
      renameSync(real, `${real}~`);
      writeFileSync(real, text);
      sm.appendMessage(user("x2"));
      seen[name] = { real: shape(real), backup: shape(`${real}~`) };
    }
    expect(seen.ours).toEqual({ real: ["#", "u1", "a1", "x1", "x2"], backup: ["#", "u1", "a1", "x1"] });
    expect(seen.ours).toEqual(seen.ref);
  });

  it("a session folder moved away: the append throws ENOENT, keeps nothing, and the moved file is untouched", () => {
    const seen = {};
    for (const [name, SM] of IMPLS) {
      const base = join(root, "folder", name);
      const dir = join(base, "sessions");
      mkdirSync(dir, { recursive: true });
      const sm = SM.create("/cwd", dir);
      sm.appendMessage(user("u1"));
      sm.appendMessage(assistant("a1"));
      const p = sm.getSessionFile();
      renameSync(dir, join(base, "moved"));
      let thrown;
      try {
        sm.appendMessage(user("x1"));
      } catch (e) {
        thrown = { code: e.code, message: e.message.replace(p, "<file>") };
      }
      seen[name] = {
        thrown,
        entries: sm.getEntries().length,
        leaf: sm.getLeafEntry()?.message?.content?.[0]?.text,
        moved: shape(join(base, "moved", p.slice(dir.length + 1))),
        folder: existsSync(dir),
      };
    }
    expect(seen.ours.thrown?.code).toBe("ENOENT");
    expect(seen.ours).toEqual({ ...seen.ref });
    expect(seen.ours.moved).toEqual(["#", "u1", "a1"]);
  });
});

describe("two processes appending while a third replaces the file between their turns", () => {
  /** A child appending in phases (phased-writer.mjs); `go(n, tag)` resolves when its n appends returned. */
  function writer(impl, file) {
    const child = spawn(process.execPath, [fileURLToPath(new URL("phased-writer.mjs", import.meta.url)), file], {
      env: { ...process.env, SAFETY_IMPL: impl },
      stdio: ["pipe", "pipe", "inherit"],
    });
    let buffered = "";
    const waiting = [];
    child.stdout.on("data", (d) => {
      buffered += d;
      let nl = buffered.indexOf("\n");
      while (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        waiting.shift()?.(line);
        nl = buffered.indexOf("\n");
      }
    });
    return {
      go: (n, tag) =>
        new Promise((resolve) => {
          waiting.push(resolve);
          child.stdin.write(`go ${n} ${tag}\n`);
        }),
      end: async () => {
        child.stdin.end();
        await once(child, "exit");
      },
    };
  }

  for (const [impl] of IMPLS) {
    it(`${impl}: every line in the file at the path, once, after an editor's save and a repair with a .bak`, async () => {
      const dir = join(root, "three", impl);
      mkdirSync(dir, { recursive: true });
      const sm = IMPLS.find(([n]) => n === impl)[1].create("/cwd", dir);
      sm.appendMessage(user("u1"));
      sm.appendMessage(assistant("a1"));
      const p = sm.getSessionFile();
      const [w1, w2] = [writer(impl, p), writer(impl, p)];
      const phase = (tag) => Promise.all([w1.go(40, `${tag}-1`), w2.go(40, `${tag}-2`)]);
      expect(await phase("p1")).toEqual(["done", "done"]);
      const saved = readFileSync(p);
      renameSync(p, `${p}~`);
      writeFileSync(p, saved);
      expect(await phase("p2")).toEqual(["done", "done"]);
      linkSync(p, `${p}.bak`);
      rewrite(p, readFileSync(p));
      expect(await phase("p3")).toEqual(["done", "done"]);
      await Promise.all([w1.end(), w2.end()]);
      const at = shape(p);
      expect(at.slice(0, 3)).toEqual(["#", "u1", "a1"]);
      const want = [];
      for (const ph of ["p1", "p2", "p3"])
        for (const w of [1, 2]) for (let i = 0; i < 40; i++) want.push(`${ph}-${w} ${i}`);
      expect(at.slice(3).sort()).toEqual(want.sort());
      // What was set aside got nothing after it was set aside.
      expect(shape(`${p}~`).filter((t) => !t.startsWith("p1"))).toEqual(["#", "u1", "a1"]);
      expect(shape(`${p}.bak`).filter((t) => t.startsWith("p3"))).toEqual([]);
      // pi's class opens it with every entry.
      expect(ref.SessionManager.open(p, dir).getEntries().length).toBe(2 + 240);
    }, 60_000);
  }
});

describe("our own command line never rewrites a session a SessionManager of ours is appending to", () => {
  const repo = fileURLToPath(new URL("../..", import.meta.url));
  const bin = process.env.PI_SESSIONS_BIN || join(repo, "target", "release", "pi-sessions");
  beforeAll(() => {
    if (existsSync(bin)) return;
    const r = spawnSync("cargo", ["build", "--release", "--bin", "pi-sessions"], { cwd: repo, stdio: "inherit" });
    if (r.status !== 0) throw new Error("cannot build pi-sessions");
  }, 600_000);

  it.skipIf(process.platform !== "linux")(
    "prune, check --repair, archive and rm refuse it (held open), and every append lands",
    () => {
      const agent = join(root, "cli-agent");
      const dir = join(agent, "sessions", "--cwd--");
      mkdirSync(dir, { recursive: true });
      const sm = ours.SessionManager.create("/cwd", dir);
      sm.appendMessage(user("u1"));
      const a1 = sm.appendMessage(assistant("a1"));
      sm.appendMessage(user("side"));
      sm.branch(a1);
      sm.appendMessage(user("u2"));
      const p = sm.getSessionFile();
      // Damage that `check --repair` would drop, written by another program.
      appendFileSync(p, "not json\n");
      const before = readFileSync(p);
      // The "modified in the last minute" rule off: the held descriptor alone must refuse.
      const env = { ...process.env, XDG_DATA_HOME: join(agent, ".xdg"), PI_SESSION_NATIVE_CLI_RECENT_SECS: "0" };
      const outcomes = {};
      for (const args of [
        ["prune", p],
        ["check", p, "--repair"],
        ["archive", p],
        ["rm", p, "--permanent"],
      ]) {
        const r = spawnSync(bin, ["--agent-dir", agent, ...args], { encoding: "utf8", env });
        outcomes[args[0]] = { code: r.status, inUse: /in use/.test(r.stdout + r.stderr) };
        expect(readFileSync(p).equals(before), `${args[0]} left the file as it was`).toBe(true);
      }
      expect(outcomes).toEqual({
        prune: { code: 1, inUse: true },
        check: { code: 1, inUse: true },
        archive: { code: 1, inUse: true },
        rm: { code: 1, inUse: true },
      });
      for (const t of ["x1", "x2", "x3"]) sm.appendMessage(user(t));
      expect(shape(p)).toEqual(["#", "u1", "a1", "side", "u2", "!", "x1", "x2", "x3"]);
      expect(existsSync(`${p}.bak`)).toBe(false);
    },
  );
});
