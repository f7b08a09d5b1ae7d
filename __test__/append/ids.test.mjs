// The id and timestamp helpers that replace `randomUUID().slice(0, 8)` and
// `new Date().toISOString()` on the append path must produce the same kind of value.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

const require = createRequire(import.meta.url);
const { binding, uuidv7 } = require("../../lib/native.js");
const { nowIso } = require("../../lib/persistence.js");
const { shortId } = binding;

describe("shortId", () => {
  it("is 8 lowercase hex digits, like randomUUID().slice(0, 8)", () => {
    for (let i = 0; i < 5000; i++) expect(shortId()).toMatch(/^[0-9a-f]{8}$/);
  });

  it("is uniform over every digit and position (chi-squared, 200k draws)", () => {
    const n = 200_000;
    const counts = Array.from({ length: 8 }, () => new Array(16).fill(0));
    const seen = new Set();
    for (let i = 0; i < n; i++) {
      const id = shortId();
      seen.add(id);
      for (let p = 0; p < 8; p++) counts[p][Number.parseInt(id[p], 16)]++;
    }
    // 200k draws from 2^32 values: ~4.7 collisions expected; a broken pool repeats.
    expect(n - seen.size).toBeLessThan(40);
    const expected = n / 16;
    for (const row of counts) {
      const chi2 = row.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
      // 15 degrees of freedom: p < 1e-6 above ~56.
      expect(chi2).toBeLessThan(56);
    }
  });
});

describe("uuidv7", () => {
  it("is pi-ai's monotonic UUIDv7: version 7, RFC variant, the current millisecond, increasing", () => {
    const ids = Array.from({ length: 2000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    const ms = Number.parseInt(ids[0].replace("-", "").slice(0, 12), 16);
    expect(Math.abs(ms - Date.now())).toBeLessThan(60_000);
  });
});

describe("nowIso", () => {
  afterEach(() => vi.useRealTimers());

  it("is new Date().toISOString() of the current millisecond", () => {
    for (let i = 0; i < 1000; i++) {
      const before = Date.now();
      const iso = nowIso();
      const after = Date.now();
      const t = Date.parse(iso);
      expect(new Date(t).toISOString()).toBe(iso);
      expect(t).toBeGreaterThanOrEqual(before);
      expect(t).toBeLessThanOrEqual(after);
    }
  });

  it("follows a mocked clock, backwards too (the per-millisecond cache keys on the value)", () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2030-01-02T03:04:05.678Z"));
    expect(nowIso()).toBe("2030-01-02T03:04:05.678Z");
    vi.setSystemTime(new Date("1999-12-31T23:59:59.999Z"));
    expect(nowIso()).toBe("1999-12-31T23:59:59.999Z");
    vi.setSystemTime(new Date("+275760-09-13T00:00:00.000Z"));
    expect(nowIso()).toBe("+275760-09-13T00:00:00.000Z");
  });
});

describe("the class's entry ids (the core's, reserved in batches)", () => {
  const { SessionManager } = require("../../index.js");

  it("are 8 hex digits, distinct and uniform across many batches, in memory and on disk", () => {
    const sm = SessionManager.inMemory("/tmp");
    const n = 40_000;
    const counts = Array.from({ length: 8 }, () => new Array(16).fill(0));
    const seen = new Set();
    for (let i = 0; i < n; i++) {
      const id = sm.appendCustomEntry("t", i);
      expect(seen.has(id)).toBe(false);
      seen.add(id);
      for (let p = 0; p < 8; p++) counts[p][Number.parseInt(id[p], 16)]++;
    }
    expect(sm.getEntries().length).toBe(n);
    const expected = n / 16;
    for (const row of counts) {
      const chi2 = row.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
      expect(chi2).toBeLessThan(56);
    }
    // On disk: the first write, then commits, across batches.
    const dir = mkdtempSync(join(tmpdir(), "ids-"));
    try {
      const disk = SessionManager.create("/tmp", dir);
      const ids = [disk.appendMessage({ role: "user", content: "hi", timestamp: 1 })];
      for (let i = 0; i < 700; i++) ids.push(disk.appendCustomEntry("t", i));
      expect(new Set(ids).size).toBe(ids.length);
      const lines = readFileSync(disk.getSessionFile(), "utf8").trim().split("\n").slice(1);
      expect(lines.map((l) => JSON.parse(l).id)).toEqual(ids);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a builder that throws gives its id back, and the entries handed in count as the core's", () => {
    const header = { type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" };
    const e1 = { type: "custom", customType: "t", id: "aaaaaaaa", parentId: null, timestamp: header.timestamp };
    const sm = SessionManager.inMemory("/tmp", undefined, [header, e1, { ...e1 }]);
    // byId.size, from the core's index: the duplicate id counts once.
    expect(sm.getEntryCount()).toBe(1);
    expect(sm.getEntry("aaaaaaaa")).toBe(sm.getEntries()[1]);
    expect(() => sm.branchWithSummary("nope", "s")).toThrow("Entry nope not found");
    const id = sm.appendCustomEntry("t", 1);
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(sm.getLeafId()).toBe(id);
    expect(sm.getEntry(id).parentId).toBe("aaaaaaaa");
    expect(sm.getEntryCount()).toBe(2);
    expect(sm.getEntries().length).toBe(3);
  });
});
