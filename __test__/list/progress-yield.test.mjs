// A listing with a progress callback leaves the event loop its turns, as the reference does.
//
// The reference reads files asynchronously, so timers and I/O (a TUI's rendering: pi's
// picker paints its progress from a timer) run between its progress calls. Ours gets the rows
// of unchanged files from memory or the listing index in one or two native calls; without a
// turn of the event loop now and then, every progress call would run in one synchronous
// stretch. Here each progress call takes 2 ms, 200 of them: a timer set before the listing
// must fire before it ends, with either implementation.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { busy, writePlainSessions } from "../helpers/folder.mjs";
import { IMPLS } from "../helpers/impls.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const root = makeTempRoot("progress-yield");
const dir = join(root, "sessions", "--project--");
const CWD = "/home/u/progress-yield";
const COUNT = 200;

describe("progress callbacks and the event loop", () => {
  it("a timer fires during a listing whose progress calls take 400 ms, as with the reference", async () => {
    writePlainSessions(dir, CWD, COUNT);
    // Older than the listing index's 2 s settle rule, so that ours remembers their rows and
    // hands them over at once on the next listing (the case that needs the turns).
    await new Promise((r) => setTimeout(r, 2100));
    for (const impl of IMPLS) {
      const { SessionManager } = impl.mod;
      await SessionManager.list(CWD, dir);
      let done = false;
      let firedDuring = null;
      const timer = setTimeout(() => {
        firedDuring = !done;
      }, 0);
      const calls = [];
      const listed = await SessionManager.list(CWD, dir, (loaded, total) => {
        calls.push([loaded, total]);
        busy(2);
      });
      done = true;
      clearTimeout(timer);
      expect(listed.length, impl.name).toBe(COUNT);
      expect(calls.length, impl.name).toBe(COUNT);
      expect(calls.at(-1), impl.name).toEqual([COUNT, COUNT]);
      expect(firedDuring, `${impl.name}: the timer fired while the listing ran`).toBe(true);
    }
  }, 60_000);
});
