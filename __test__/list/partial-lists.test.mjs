// pi-native's one deviation from 1.6.0: partial session lists on a time cadence (pi/swap.js's
// usePartialListsByTime, which lib/listing.js finds through a global). The library's own cadence, one partial list
// per 10 files (list) or 100 (listAll), is checked against the reference by the differential
// tests; here, with the switch on: the first and the last file carry one, the rest at most one
// per 100 ms, and each is the sorted list of what was loaded so far. With the switch off, the
// same listing gives 1.6.0's count.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { busy, writePlainSessions } from "../helpers/folder.mjs";
import { ours, ref } from "../helpers/impls.mjs";
import swap from "../../pi/swap.js";
import { makeTempRoot } from "../helpers/tmp.mjs";

const SWITCH = Symbol.for("pi-session-native.partialLists");
const root = makeTempRoot("partial-lists");
const dir = join(root, "sessions", "--project--");
const CWD = "/home/u/partial-lists";
const COUNT = 300;

writePlainSessions(dir, CWD, COUNT);

/** Lists with a progress callback that takes 1 ms per call; returns the calls that carried a list. */
async function partials(SessionManager, listAll) {
  const calls = [];
  const onProgress = (loaded, total, partial) => {
    if (partial) calls.push({ loaded, total, ids: partial.map((s) => s.id), at: performance.now() });
    busy(1);
  };
  const final = listAll
    ? await SessionManager.listAll(dir, onProgress)
    : await SessionManager.list(CWD, dir, onProgress);
  return { calls, final };
}

afterEach(() => {
  delete globalThis[SWITCH];
});

describe("pi-native's partial lists on a time cadence", () => {
  for (const listAll of [false, true]) {
    const name = listAll ? "listAll" : "list";
    it(`${name}: the first and the last file, between them at most one per 100 ms`, async () => {
      const reference = await partials(ref.SessionManager, listAll);
      swap.usePartialListsByTime();
      const { calls, final } = await partials(ours.SessionManager, listAll);
      expect(final.map((s) => s.id)).toEqual(reference.final.map((s) => s.id));
      expect(calls[0].loaded).toBe(1);
      expect(calls.at(-1).loaded).toBe(COUNT);
      expect(calls.at(-1).ids).toEqual(reference.calls.at(-1).ids);
      // Each list holds exactly the sessions loaded so far, newest first (the reference's order).
      for (const c of calls) {
        const want = reference.final.map((s) => s.id).filter((id) => Number(id.slice(1)) >= COUNT - c.loaded);
        expect(c.ids).toEqual(want);
      }
      // The cadence reads the clock before each callback and this test inside it, so a gap can
      // come out a little short of 100 ms (98.5 under wine): 90 still fails a cadence without one.
      for (let i = 1; i < calls.length - 1; i++) expect(calls[i].at - calls[i - 1].at).toBeGreaterThanOrEqual(90);
      // ~300 ms of callbacks: at most one list per 100 ms besides the first and the last
      // (1.6.0: 31, one per 10 files; listAll(dir) lists one folder as list does).
      expect(calls.length).toBeLessThanOrEqual(2 + Math.ceil((calls.at(-1).at - calls[0].at) / 100));
      expect(reference.calls.length).toBe(31);
      expect(calls.length).toBeLessThan(10);
    });

    it(`${name}: without the switch, 1.6.0's cadence`, async () => {
      const reference = await partials(ref.SessionManager, listAll);
      const { calls } = await partials(ours.SessionManager, listAll);
      expect(calls.map((c) => c.loaded)).toEqual(reference.calls.map((c) => c.loaded));
    });
  }
});
