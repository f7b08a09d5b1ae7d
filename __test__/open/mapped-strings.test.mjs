// A large session's long plain strings (base64 images, ≥ 32 KiB) reach JS as strings over a
// read-only mapping of the file (src/ffi.rs `MappedUnits`; the hazards: open/mapped.test.mjs).
// Against the reference: the same values, key order and JSON bytes from every method that
// materialises entries, whichever method comes first; the same object identities; strings
// equal across calls; images in every place an entry may hold them (nested, in arrays, at
// odd keys, next to escaped text), and lines where the core must copy (duplicate keys).
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ours, ref } from "../helpers/impls.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const root = makeTempRoot("mapped");
const b64 = (n, seed) =>
  randomBytes(Math.ceil((n * 3) / 4) + seed)
    .toString("base64")
    .slice(seed, seed + n);

/** Lines of a session (≥ 1 MiB: its lines stay in the file) with images in many shapes. */
function sessionText() {
  const lines = [
    JSON.stringify({
      type: "session",
      version: 3,
      id: "0193a000-0000-7000-8000-000000000map",
      timestamp: "2026-01-01T00:00:00.000Z",
      cwd: "/tmp/m",
    }),
  ];
  let parent = null;
  const add = (i, message, extra = {}) => {
    const id = `e${String(i).padStart(7, "0")}`;
    lines.push(
      JSON.stringify({
        type: "message",
        id,
        parentId: parent,
        timestamp: `2026-01-01T00:00:${String(i % 60).padStart(2, "0")}.000Z`,
        ...extra,
        message,
      }),
    );
    parent = id;
  };
  const image = (n, seed) => ({ type: "image", data: b64(n, seed), mimeType: "image/png" });
  add(1, { role: "user", content: [{ type: "text", text: "one" }, image(40_000, 1)], timestamp: 1 });
  // Two images, escaped text between them, a nested one, and an image at a top-level key.
  add(
    2,
    {
      role: "user",
      content: [image(300_000, 2), { type: "text", text: `a "quoted"\nline\t${"é".repeat(500)}` }, image(33_000, 3)],
      timestamp: 2,
    },
    { extra: b64(70_000, 4) },
  );
  add(3, {
    role: "toolResult",
    toolCallId: "t",
    toolName: "read",
    content: [{ type: "text", text: "x" }, image(32 * 1024, 5)],
    details: { nested: [[{ deep: b64(50_000, 6) }]] },
    isError: false,
    timestamp: 3,
  });
  // Just under the threshold, and a long string with an escape (copied as before).
  add(4, {
    role: "user",
    content: [image(32 * 1024 - 1, 7), { type: "text", text: `${b64(60_000, 8)}\\n${b64(60_000, 9)}` }],
    timestamp: 4,
  });
  // A non-ASCII long plain string (UTF-8 in the file: not Latin-1 bytes, so copied).
  add(5, { role: "user", content: [{ type: "text", text: "ü".repeat(40_000) }], timestamp: 5 });
  // Whitespace around values and a duplicate key: a line the core must take whole.
  lines.push(
    `{"type":"message","id":"e0000006","parentId":"${parent}","timestamp":"2026-01-01T00:00:06.000Z","message": { "role" : "user", "content" : [ { "type":"image", "data" : "${b64(40_000, 10)}", "mimeType":"image/png" } ], "timestamp": 6 }}`,
  );
  parent = "e0000006";
  lines.push(
    `{"type":"message","id":"e0000007","parentId":"${parent}","timestamp":"2026-01-01T00:00:07.000Z","message":{"role":"user","content":[{"type":"image","data":"${b64(40_000, 11)}","data":"${b64(45_000, 12)}","mimeType":"image/png"}],"timestamp":7}}`,
  );
  parent = "e0000007";
  for (let i = 8; i < 20; i++)
    add(i, { role: i % 2 ? "assistant" : "user", content: [image(100_000 + i, i + 20)], timestamp: i });
  return `${lines.join("\n")}\n`;
}

const text = sessionText();
const ORDERS = {
  "getEntries first": (sm) => [sm.getEntries(), sm.getBranch(), sm.buildSessionContext()],
  "getBranch first": (sm) => [sm.getBranch(), sm.getEntries(), sm.buildSessionContext()],
  "getEntry first": (sm) => [sm.getEntry("e0000002"), sm.getLeafEntry(), sm.getEntries(), sm.getBranch()],
  "context first": (sm) => [sm.buildSessionContext(), sm.getTree().length, sm.getEntries()],
};

describe("strings over the mapped file", () => {
  it("the test session is large enough to stay in its file, with long plain strings", () => {
    expect(text.length).toBeGreaterThan(2 ** 20);
  });

  for (const [name, steps] of Object.entries(ORDERS)) {
    it(`${name}: the reference's values and JSON bytes`, () => {
      const file = join(root, `${name.replace(/\W/g, "-")}.jsonl`);
      writeFileSync(file, text);
      const want = steps(ref.SessionManager.open(file));
      const got = steps(ours.SessionManager.open(file));
      expect(JSON.stringify(got)).toBe(JSON.stringify(want));
      expect(got).toEqual(want);
      expect(inspect(got, { depth: 8 })).toBe(inspect(want, { depth: 8 }));
      expect(structuredClone(got)).toEqual(want);
    });
  }

  it("identity: entry objects and their strings are the same across calls", () => {
    const file = join(root, "identity.jsonl");
    writeFileSync(file, text);
    const sm = ours.SessionManager.open(file);
    const branch = sm.getBranch();
    const entries = sm.getEntries();
    expect(entries.every((e) => sm.getEntry(e.id) === e)).toBe(true);
    expect(branch.every((e) => entries.includes(e))).toBe(true);
    const img = sm.getEntry("e0000002").message.content[0].data;
    expect(img).toBe(sm.getBranch()[1].message.content[0].data);
    expect(img.length).toBe(300_000);
    expect(Buffer.from(img, "base64").toString("base64")).toBe(img);
    // A caller's change sticks, as on the reference's objects.
    sm.getEntry("e0000002").message.content[0].data = "changed";
    expect(sm.getEntries()[1].message.content[0].data).toBe("changed");
  });
});
