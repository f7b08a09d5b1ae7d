// Differential test of what changed between pi releases (lib/profile.js), ours vs the reference of the
// release under test (DIFF_PI, helpers/pi-version.mjs; `npm run test:pi-versions` runs each one):
//   - how a session dir is compared with the cwd's default one (continueRecent, list and findById filter
//     by cwd only outside it; usesDefaultSessionDir): pi's pathsEqual() from 1.5.0 on, `===` before, so a
//     default dir spelled otherwise (a trailing slash, `.` or `..` segments, relative) tells them apart;
//   - a failed append: pi before 1.5.0 keeps the entry in memory, 1.5.0 rolls it back, and so does ours in
//     every profile (a documented fix; the harness gives a pre-1.5.0 reference 1.5.0's rollback, see
//     REF_KEEPS_FAILED_APPENDS in helpers/impls.mjs, and this file checks the unpatched one);
//   - the export list (`projectContextEntry` from 1.5.0 on): free-functions.test.mjs.
// Each case also checks that the releases differ there (on the reference alone), so a case that stops
// telling the releases apart fails instead of passing for nothing.
// Not here: listing's abort checks (1.6.0 checks the signal on every line and after the last; 1.5.x
// hands it to the read stream). They differ only for an abort that lands within a few ticks of a
// file's read ending, which no deterministic test reaches; ours rejects either way (docs/pi.md).
import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { assertSame } from "../helpers/compare.mjs";
import {
  inEachImpl,
  IMPLS,
  REF_KEEPS_FAILED_APPENDS,
  REF_PROFILE,
  REF_URL,
  REF_VERSION,
  SELF,
} from "../helpers/impls.mjs";
import { REF_SWITCHES } from "../helpers/pi-version.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const LABELS = IMPLS.map((i) => i.name);
const root = makeTempRoot("pi-versions");
const CWD = "/tmp/pi-diff-cwd/pi-versions";
const OTHER_CWD = "/tmp/pi-diff-cwd/elsewhere";
const ID_HERE = "01a22d64-0000-7000-8000-0000000000a1";
const ID_ELSEWHERE = "01a22d64-0000-7000-8000-0000000000b2";

const session = (id, cwd, text) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2024-01-01T00:00:00.000Z", cwd })}\n${JSON.stringify(
    {
      type: "message",
      id: "b0000001",
      parentId: null,
      timestamp: "2024-01-01T00:00:00.000Z",
      message: { role: "user", content: text, timestamp: 1_704_067_200_000 },
    },
  )}\n`;

const each = (label, fn) => inEachImpl(root, label, fn);

/** The cwd's default session dir, spelled as `===` and pathsEqual() disagree on (all but the first). */
function spellings(defaultDir) {
  return {
    same: defaultDir,
    trailingSlash: `${defaultDir}/`,
    dotSegment: `${join(defaultDir, "..")}/./${basename(defaultDir)}`,
    dotDot: `${defaultDir}/../${basename(defaultDir)}`,
    relative: relative(process.cwd(), defaultDir),
  };
}

/** Fills the default dir: a session of CWD, and a newer one of another cwd. */
function fill(defaultDir) {
  mkdirSync(defaultDir, { recursive: true });
  const here = join(defaultDir, "2024-01-01T00-00-00-000Z_here.jsonl");
  const elsewhere = join(defaultDir, "2024-01-02T00-00-00-000Z_elsewhere.jsonl");
  writeFileSync(here, session(ID_HERE, CWD, "here"));
  writeFileSync(elsewhere, session(ID_ELSEWHERE, OTHER_CWD, "elsewhere"));
  utimesSync(here, 1_650_000_000, 1_650_000_000);
  utimesSync(elsewhere, 1_660_000_000, 1_660_000_000);
}

describe(`session dirs compared with the default one (${LABELS.join(" vs ")}; pi ${REF_VERSION}, profile ${REF_PROFILE})`, () => {
  it("usesDefaultSessionDir, continueRecent, list and findById, by the spelling of the default dir", async () => {
    const recs = await each("spellings", async ({ base, norm, mod, SM }) => {
      const defaultDir = mod.getDefaultSessionDir(CWD);
      fill(defaultDir);
      const name = (p) => (typeof p === "string" ? basename(p) : p);
      const out = {};
      for (const [how, dir] of Object.entries(spellings(defaultDir))) {
        const created = SM.create(CWD, dir);
        out[how] = {
          usesDefaultSessionDir: created.usesDefaultSessionDir(),
          sessionDir: relative(base, created.getSessionDir()),
          continueRecent: name(SM.continueRecent(CWD, dir).getSessionFile()),
          list: (await SM.list(CWD, dir)).map((i) => name(i.path)),
          findById: [name(SM.findById(CWD, ID_ELSEWHERE, dir)), name(SM.findById(CWD, ID_HERE, dir))],
          opened: SM.open(join(defaultDir, "2024-01-01T00-00-00-000Z_here.jsonl"), dir).usesDefaultSessionDir(),
        };
      }
      return norm.value(out);
    });
    assertSame(recs[0], recs[1], "spellings", LABELS);
    // The case tells the releases apart: a trailing slash is the default dir from 1.5.0 on only.
    const ref = recs[0];
    expect(ref.same.usesDefaultSessionDir).toBe(true);
    expect(ref.same.continueRecent).toBe("2024-01-02T00-00-00-000Z_elsewhere.jsonl");
    for (const how of ["trailingSlash", "dotSegment", "dotDot", "relative"]) {
      expect(ref[how].usesDefaultSessionDir, how).toBe(REF_SWITCHES.pathsEqual);
      expect(ref[how].continueRecent, how).toBe(
        REF_SWITCHES.pathsEqual ? "2024-01-02T00-00-00-000Z_elsewhere.jsonl" : "2024-01-01T00-00-00-000Z_here.jsonl",
      );
      expect(ref[how].list.length, how).toBe(REF_SWITCHES.pathsEqual ? 2 : 1);
      expect(ref[how].findById[0] === undefined, how).toBe(!REF_SWITCHES.pathsEqual);
    }
  });

  it.skipIf(SELF)("ours runs the profile of the reference's release", () => {
    // the instance index.js loaded (Node's require cache)
    const { current } = createRequire(import.meta.url)("../../lib/profile.js");
    expect(current().name).toBe(REF_PROFILE);
  });
});

describe(`a failed append (pi ${REF_VERSION}: ${REF_KEEPS_FAILED_APPENDS ? "kept in memory" : "rolled back"}; ours: rolled back)`, () => {
  it("the unpatched reference keeps the entry before 1.5.0 only; ours never does", async () => {
    const unpatched = await import(`${REF_URL}?unpatched`);
    const leafAfterFailure = (SM, dir) => {
      const sm = SM.create(CWD, dir);
      sm.appendMessage({ role: "user", content: "first", timestamp: 1 });
      sm.appendMessage({ role: "assistant", content: [], timestamp: 2 });
      const file = sm.getSessionFile();
      rmSync(file);
      mkdirSync(file); // the next append fails at open (EISDIR)
      expect(() => sm.appendMessage({ role: "user", content: "lost", timestamp: 3 })).toThrow();
      return { leafIsPrevious: sm.getLeafId() === sm.getEntries().at(-1)?.id, entries: sm.getEntries().length };
    };
    const reference = leafAfterFailure(unpatched.SessionManager, join(root, "failed", "ref"));
    expect(reference.entries).toBe(REF_KEEPS_FAILED_APPENDS ? 3 : 2);
    if (!SELF) {
      const mine = leafAfterFailure(IMPLS[1].mod.SessionManager, join(root, "failed", "ours"));
      expect(mine.entries).toBe(2);
      expect(mine.leafIsPrevious).toBe(true);
    }
  });
});
