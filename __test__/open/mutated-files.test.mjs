// Any bytes in, no crash out: hundreds of seeded mutations of a realistic session file.
// Each opens in both implementations with the same result (or the same thrown message);
// files the reference cannot survive (parent cycles, where it loops forever) and huge
// inputs run on ours alone and must open or throw a JS Error, in bounded time.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as ours from "../../index.js";
import { hasParentCycle } from "../helpers/cycles.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const ref = await import(
  new URL("../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js", import.meta.url).href
);

const H =
  '{"type":"session","version":3,"id":"0197a1b2-0000-7000-8000-000000000001","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}';
const LINES = [
  H,
  '{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"Hello \\u00e9 😀","timestamp":1}}',
  '{"type":"message","id":"b2c3d4e5","parentId":"a1b2c3d4","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Hi!"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.txt"}}],"provider":"anthropic","model":"claude","usage":{"input":1,"output":2},"stopReason":"toolUse","timestamp":2}}',
  '{"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":"2024-12-03T14:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"line1\\nline2\\t\\"q\\""}],"isError":false,"timestamp":3}}',
  '{"type":"model_change","id":"d4e5f6a7","parentId":"c3d4e5f6","timestamp":"2024-12-03T14:05:00.000Z","provider":"openai","modelId":"gpt-4o"}',
  '{"type":"thinking_level_change","id":"e5f6a7b8","parentId":"d4e5f6a7","timestamp":"2024-12-03T14:06:00.000Z","thinkingLevel":"high"}',
  '{"type":"compaction","id":"f6a7b8c9","parentId":"e5f6a7b8","timestamp":"2024-12-03T14:10:00.000Z","summary":"sum","firstKeptEntryId":"c3d4e5f6","tokensBefore":500}',
  '{"type":"branch_summary","id":"a7b8c9d0","parentId":"a1b2c3d4","timestamp":"2024-12-03T14:15:00.000Z","fromId":"f6a7b8c9","summary":"abandoned"}',
  '{"type":"custom","customType":"ext","data":{"count":42,"2":1},"id":"b8c9d0e1","parentId":"a7b8c9d0","timestamp":"2024-12-03T14:20:00.000Z"}',
  '{"type":"custom_message","customType":"ext","content":"Injected","display":true,"id":"c9d0e1f2","parentId":"b8c9d0e1","timestamp":"2024-12-03T14:25:00.000Z"}',
  '{"type":"label","id":"d0e1f2a3","parentId":"c9d0e1f2","timestamp":"2024-12-03T14:30:00.000Z","targetId":"a1b2c3d4","label":"cp"}',
  '{"type":"session_info","id":"e1f2a3b4","parentId":"d0e1f2a3","timestamp":"2024-12-03T14:35:00.000Z","name":" Refactor "}',
  '{"type":"context_edit","id":"f2a3b4c5","parentId":"e1f2a3b4","timestamp":"2024-12-03T14:36:00.000Z","targetId":"a1b2c3d4","replacement":{"content":"edited"}}',
];
const BASE = Buffer.from(`${LINES.join("\n")}\n`);
const SPECIALS = [
  '"',
  "\\",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  "\n",
  "\r\n",
  "\u0000",
  "null",
  "-0",
  "1e400",
  "\\ud800",
  '"parentId":"a1b2c3d4"',
  '"id":"a1b2c3d4"',
].map((s) => Buffer.from(s));

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(seed) {
  const r = rng(seed);
  let b = Buffer.from(BASE);
  const n = 1 + Math.floor(r() * 6);
  for (let k = 0; k < n && b.length > 0; k++) {
    const at = Math.floor(r() * b.length);
    const op = Math.floor(r() * 6);
    if (op === 0) b[at] ^= 1 << Math.floor(r() * 8);
    else if (op === 1) b = b.subarray(0, at);
    else if (op === 2)
      b = Buffer.concat([b.subarray(0, at), SPECIALS[Math.floor(r() * SPECIALS.length)], b.subarray(at)]);
    else if (op === 3) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + Math.floor(r() * 40))]);
    else if (op === 4)
      b = Buffer.concat([b.subarray(0, at), Buffer.from([0xff, 0xc3, 0x80 + Math.floor(r() * 64)]), b.subarray(at)]);
    else b = Buffer.concat([b.subarray(0, at), Buffer.from("\n"), b.subarray(at)]);
  }
  return b;
}

function observe(impl, file) {
  const out = {};
  try {
    const sm = impl.SessionManager.open(file);
    out.entries = JSON.stringify(sm.getEntries());
    out.leaf = String(sm.getLeafId());
    out.header = JSON.stringify(sm.getHeader());
    out.name = String(sm.getSessionName());
    for (const [k, f] of [
      ["context", () => sm.buildSessionContext()],
      ["tree", () => sm.getTree().length],
      ["branch", () => sm.getBranch().length],
    ]) {
      try {
        out[k] = JSON.stringify(f());
      } catch (e) {
        expect(e).toBeInstanceOf(Error);
        out[k] = `throws ${e.message}`;
      }
    }
  } catch (e) {
    expect(e).toBeInstanceOf(Error);
    out.open = `throws ${e.message.replaceAll(file, "<file>")}`;
  }
  out.load = JSON.stringify(impl.loadEntriesFromFile(file));
  out.bytes = readFileSync(file).toString("latin1");
  // An empty file gets a fresh header (random session id, current time); a file that lost
  // its version is migrated (random entry ids, numbered here by first appearance).
  const ids = new Map();
  for (const k of Object.keys(out)) out[k] = normalize(out[k], ids);
  return out;
}

const BASE_IDS = new Set(BASE.toString("latin1").match(/[0-9a-f]{8}/g));

const NOW_YEAR = String(new Date().getUTCFullYear());
function normalize(text, ids) {
  return text
    .replace(/(?<![0-9a-f-])[0-9a-f]{8}(?![0-9a-f-])/g, (id) => {
      if (BASE_IDS.has(id)) return id;
      if (!ids.has(id)) ids.set(id, `<id${ids.size}>`);
      return ids.get(id);
    })
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuidv7>")
    .replace(new RegExp(`${NOW_YEAR}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z`, "g"), "<now>");
}

describe("mutated session files (ref vs ours)", () => {
  const dir = makeTempRoot("mutated");
  const COUNT = 600;
  it(`${COUNT} seeded mutations open identically, or throw the same Error`, () => {
    let compared = 0;
    let oursOnly = 0;
    for (let seed = 1; seed <= COUNT; seed++) {
      const bytes = mutate(seed);
      const fr = join(dir, `ref-${seed}.jsonl`);
      const fo = join(dir, `ours-${seed}.jsonl`);
      writeFileSync(fr, bytes);
      writeFileSync(fo, bytes);
      if (hasParentCycle(bytes)) {
        // The reference loops forever here; ours must answer with an Error or a result.
        observe(ours, fo);
        oursOnly++;
        continue;
      }
      const a = observe(ref, fr);
      const b = observe(ours, fo);
      expect({ seed, ...b }).toEqual({ seed, ...a });
      compared++;
    }
    expect(compared).toBeGreaterThan(550);
    console.log(`mutated files: ${compared} compared with the reference, ${oursOnly} with cycles (ours only)`);
  }, 120_000);

  it("100k-deep nesting and a 200 MB single line: open or throw, never crash", () => {
    const deep = join(dir, "deep.jsonl");
    writeFileSync(
      deep,
      `${H}\n{"type":"custom","id":"x","parentId":null,"data":${"[".repeat(100_000)}${"]".repeat(100_000)}}\n`,
    );
    expect(ours.SessionManager.open(deep).getEntryCount()).toBe(1);
    const huge = join(dir, "huge.jsonl");
    const big = "x".repeat(200 * 1024 * 1024);
    writeFileSync(huge, `${H}\n{"type":"custom","id":"y","parentId":null,"data":"${big}"}\n`);
    const sm = ours.SessionManager.open(huge);
    expect(sm.getEntryCount()).toBe(1);
    expect(sm.getLeafId()).toBe("y");
    const broken = join(dir, "huge-broken.jsonl");
    writeFileSync(broken, `${H}\n{"type":"custom","id":"z","parentId":null,"data":"${big}\n`);
    expect(ours.SessionManager.open(broken).getEntryCount()).toBe(0);
  }, 120_000);
});
