// Data-safety guarantees beyond the reference (README "Data safety"). Each test fails on a
// naive implementation: torn tails, lost appends, interleaved writers, touched non-session files.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../index.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const WRITER = fileURLToPath(new URL("./writer.mjs", import.meta.url));

function newSession() {
  const dir = makeTempRoot("safety");
  const sm = SessionManager.create("/tmp/safety-project", dir);
  sm.appendMessage({ role: "user", content: "first", timestamp: 1 });
  sm.appendMessage({
    role: "assistant",
    content: [{ type: "text", text: "ok" }],
    provider: "p",
    model: "m",
    timestamp: 2,
  });
  return { dir, sm, file: sm.getSessionFile() };
}

/** Every line parses and every id is unique; returns the parsed entries. */
function checkFile(file) {
  const text = readFileSync(file, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  const lines = text.slice(0, -1).split("\n");
  const entries = lines.map((l) => JSON.parse(l));
  const ids = entries.slice(1).map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length);
  return entries;
}

describe("torn tails", () => {
  it("an append that fails part-way (EFBIG) leaves no partial bytes and rolls back memory", () => {
    const { file } = newSession();
    const size = statSync(file).size;
    // Limit file size to just above the current size (ulimit -f counts 512-byte blocks);
    // ignore SIGXFSZ so the write fails with EFBIG instead of killing the process.
    const limitBlocks = Math.ceil((size + 1500) / 512);
    const r = spawnSync(
      "bash",
      ["-c", `trap '' XFSZ; ulimit -f ${limitBlocks}; exec node "$0" "$1" 50 w`, WRITER, file],
      {
        encoding: "utf8",
      },
    );
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(/ERR EFBIG EFBIG: file too large, write/);
    const written = r.stdout.split("\n").filter((l) => /^[0-9a-f]{8}$/.test(l));
    const entries = checkFile(file);
    // Header + 2 + every append that returned; nothing else, nothing torn.
    expect(entries.length).toBe(3 + written.length);
    expect(entries.slice(3).map((e) => e.id)).toEqual(written);
    // Memory was rolled back: the session held exactly what the file holds.
    expect(r.stdout).toContain(`ENTRIES ${2 + written.length}`);
    // The next append (no limit now) starts on a fresh line.
    const sm = SessionManager.open(file);
    sm.appendMessage({ role: "user", content: "after", timestamp: 3 });
    expect(checkFile(file).length).toBe(4 + written.length);
  });

  it("a file ending in a torn line gets a newline on load, so the next append is a line of its own", () => {
    const { file } = newSession();
    writeFileSync(file, `${readFileSync(file, "utf8")}{"type":"message","id":"torn","par`);
    const sm = SessionManager.open(file);
    sm.appendMessage({ role: "user", content: "next", timestamp: 3 });
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines.at(-3)).toBe('{"type":"message","id":"torn","par');
    expect(JSON.parse(lines.at(-2)).message.content).toBe("next");
  });
});

describe("crash at any instant", () => {
  it("SIGKILL at random moments never loses an entry whose append returned", async () => {
    const { file } = newSession();
    let rng = 12345;
    const rand = () => (rng = (rng * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const acknowledged = [];
    const kills = 12;
    let torn = 0;
    for (let k = 0; k < kills; k++) {
      const child = spawn(process.execPath, [WRITER, file, "100000", `k${k}`], { stdio: ["ignore", "pipe", "ignore"] });
      let buf = "";
      child.stdout.on("data", (d) => {
        buf += d;
      });
      // Killed 150-400 ms into its appends: counted from its first acknowledged one, so a slow
      // start (an emulated Node takes seconds) is not mistaken for the appends.
      await new Promise((r) => {
        child.stdout.once("data", r);
        child.on("close", r);
      });
      await new Promise((r) => setTimeout(r, 150 + rand() * 250));
      child.kill("SIGKILL");
      await new Promise((r) => child.on("close", r));
      // Only complete lines were acknowledged (printed after the append returned).
      const done = buf
        .split("\n")
        .slice(0, -1)
        .filter((l) => /^[0-9a-f]{8}$/.test(l));
      acknowledged.push(...done);
      // A kill inside a large write(2) can leave a partial line (the kernel stops between
      // pages); it was never acknowledged. Opening repairs the tail as the reference does
      // (a newline is added) and every acknowledged entry is there.
      if (!readFileSync(file, "utf8").endsWith("\n")) torn++;
      const sm = SessionManager.open(file);
      const ids = new Set(sm.getEntries().map((e) => e.id));
      for (const id of acknowledged) expect(ids.has(id)).toBe(true);
      const lines = readFileSync(file, "utf8").slice(0, -1).split("\n");
      const malformed = lines.filter((l) => {
        try {
          JSON.parse(l);
          return false;
        } catch {
          return true;
        }
      });
      expect(malformed.length).toBeLessThanOrEqual(torn);
    }
    expect(acknowledged.length).toBeGreaterThan(0);
    console.log(
      `SIGKILL: ${kills} kills, ${acknowledged.length} acknowledged appends, 0 lost, ${torn} torn tails repaired on open`,
    );
  }, 60000);
});

describe("two writers on one session", () => {
  it("two processes appending concurrently never interleave bytes and lose no entry", async () => {
    const { file } = newSession();
    const run = (tag) =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [WRITER, file, "300", tag], { stdio: ["ignore", "pipe", "inherit"] });
        let out = "";
        child.stdout.on("data", (d) => {
          out += d;
        });
        child.on("close", (code) => resolve({ code, out }));
      });
    const [a, b] = await Promise.all([run("A"), run("B")]);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    const entries = checkFile(file);
    expect(entries.length).toBe(3 + 600);
    const idsA = a.out.split("\n").filter((l) => /^[0-9a-f]{8}$/.test(l));
    const idsB = b.out.split("\n").filter((l) => /^[0-9a-f]{8}$/.test(l));
    const inFile = new Set(entries.map((e) => e.id));
    for (const id of [...idsA, ...idsB]) expect(inFile.has(id)).toBe(true);
    // Each writer picked up the other's entries before its own appends: its final
    // in-memory count includes entries it did not write.
    const count = (out) => Number(out.match(/ENTRIES (\d+)/)[1]);
    expect(Math.max(count(a.out), count(b.out))).toBe(602);
  }, 60000);

  it("two managers on the same file in one process ignore each other's appends, as the reference's do", () => {
    const { file } = newSession();
    const one = SessionManager.open(file);
    const two = SessionManager.open(file);
    const a = one.appendMessage({ role: "user", content: "from one", timestamp: 5 });
    const b = two.appendMessage({ role: "user", content: "from two", timestamp: 6 });
    const c = one.appendMessage({ role: "user", content: "one again", timestamp: 7 });
    expect(two.getEntry(a)).toBeUndefined();
    expect(one.getEntry(b)).toBeUndefined();
    // Each keeps its own branch: both first appends are children of the old leaf.
    expect(two.getEntry(b).parentId).toBe(one.getEntry(a).parentId);
    expect(one.getEntry(c).parentId).toBe(a);
    expect(two.getEntries().length).toBe(3);
    expect(one.getEntries().length).toBe(4);
    // The file holds every line, whole; a manager opened afterwards sees them all.
    expect(checkFile(file).length).toBe(6);
    expect(SessionManager.open(file).getEntries().length).toBe(5);
  });
});

describe("non-session files", () => {
  it("open() of a non-session file throws and leaves its bytes and mtime untouched", () => {
    const dir = makeTempRoot("nonsession");
    for (const [name, content] of [
      ["a.jsonl", '{"type":"message","id":"x"}'],
      ["b.jsonl", "hello world, no newline"],
      ["c.jsonl", '{"type":"session","id":5}\n'],
    ]) {
      const file = join(dir, name);
      writeFileSync(file, content);
      utimesSync(file, new Date(1_000_000_000_000), new Date(1_000_000_000_000));
      expect(() => SessionManager.open(file)).toThrow(`Session file is not a valid pi session: ${file}`);
      expect(readFileSync(file, "utf8")).toBe(content);
      expect(statSync(file).mtimeMs).toBe(1_000_000_000_000);
    }
    expect(readdirSync(dir).sort()).toEqual(["a.jsonl", "b.jsonl", "c.jsonl"]);
  });
});

describe("atomic rewrites", () => {
  it("migration keeps a backup of the original and rewrites in one rename", () => {
    const dir = makeTempRoot("migrate");
    const file = join(dir, "old.jsonl");
    const v1 =
      '{"type":"session","id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}\n' +
      '{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"a"}}\n';
    writeFileSync(file, v1);
    const sm = SessionManager.open(file);
    expect(sm.getHeader().version).toBe(3);
    expect(readFileSync(`${file}.v1.bak`, "utf8")).toBe(v1);
    expect(readFileSync(file, "utf8")).toContain('"version":3');
    expect(readdirSync(dir).sort()).toEqual(["old.jsonl", "old.jsonl.v1.bak"]);
  });
});
