// File-name order without ICU (lib/runtime.js, `discovery::jsonl_names_descending`) against
// `localeCompare` and against the reference.
//
// list() sorts a folder's names with `b.localeCompare(a)`, and listAll breaks mtime ties with
// it. Under an English default locale ours sorts printable ASCII names by V8's own weight
// table instead of building ICU's collator; under any other locale it must fall back. Each
// case runs in a fresh Node process with the locale set in its environment. Under Bun
// (scripts/bun.mjs) the children are Bun processes: the table is never used there (its
// `localeCompare` is JavaScriptCore's, en-US whatever LANG says), and the tied sessions must
// still come out in the order of the reference under Bun.
import { spawnSync } from "node:child_process";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../helpers/prng.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const LIST_CHILD = fileURLToPath(new URL("../helpers/list-child.mjs", import.meta.url));
const COLLATE = fileURLToPath(new URL("../../lib/runtime.js", import.meta.url));
const NATIVE = fileURLToPath(new URL("../../lib/native.js", import.meta.url));
const root = makeTempRoot("collation");
const CWD = "/home/u/collation";
const BUN = typeof process.versions.bun === "string";

/** The environment with the locale variables ICU reads replaced by `locale`. */
function withLocale(locale) {
  const env = { ...process.env, PI_SESSION_NATIVE_INDEX_DIR: join(root, "index") };
  for (const k of ["LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE", "NODE_OPTIONS"]) delete env[k];
  return { ...env, ...locale };
}

function node(args, env, input) {
  const r = spawnSync(process.execPath, args, { encoding: "utf8", env, input, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

// Names of every printable ASCII character but "/", including the pairs where collation and
// code-unit order disagree (case, "_" before "-", punctuation before digits).
const rng = mulberry32(20261202);
const ALPHABET = [...Array(95)].map((_, i) => String.fromCharCode(0x20 + i)).filter((c) => c !== "/");
const randomName = () => {
  const pick = rng() < 0.5 ? "aAbB_-.0Zz" : ALPHABET.join("");
  let s = "";
  for (let n = 1 + Math.floor(rng() * 8); n > 0; n--) s += pick[Math.floor(rng() * pick.length)];
  return s;
};

describe("collation without ICU", () => {
  it("orders random printable names as localeCompare does (core and facade)", () => {
    const dir = join(root, "names");
    mkdirSync(dir, { recursive: true });
    const names = new Set(["aa.jsonl", "ab.jsonl", "Ab.jsonl", "aB.jsonl", "a_b.jsonl", "a-b.jsonl", "a b.jsonl"]);
    while (names.size < 600) names.add(`${randomName()}.jsonl`);
    for (const n of names) writeFileSync(join(dir, n), "");
    writeFileSync(join(dir, "other.txt"), "");
    const pairs = [...Array(4000)].map(() => [randomName(), randomName()]);
    const script = `
      const { readdirSync } = require("node:fs");
      const { binding } = require(${JSON.stringify(NATIVE)});
      const { asciiOrderKnown, compare } = require(${JSON.stringify(COLLATE)});
      const pairs = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
      const sign = (x) => Math.sign(x);
      const want = readdirSync(${JSON.stringify(dir)}).filter((f) => f.endsWith(".jsonl")).sort((a, b) => b.localeCompare(a));
      console.log(JSON.stringify({
        known: asciiOrderKnown(),
        core: binding.jsonlNamesDescending(${JSON.stringify(dir)}),
        want,
        pairs: pairs.filter(([a, b]) => sign(compare(a, b)) !== sign(a.localeCompare(b))),
      }));`;
    const en = JSON.parse(node(["-e", script], withLocale({ LANG: "en_US.UTF-8" }), JSON.stringify(pairs)));
    expect(en.known).toBe(!BUN);
    if (!BUN) expect(en.core).toEqual(en.want);
    expect(en.pairs).toEqual([]);
    // Another locale: the facade does not use the table (the core would still sort by it).
    const da = JSON.parse(node(["-e", script], withLocale({ LANG: "da_DK.UTF-8" }), JSON.stringify(pairs)));
    expect(da.known).toBe(false);
    expect(da.pairs).toEqual([]);
    if (!BUN) expect(da.want).not.toEqual(en.want);
  });

  it("tells the locales apart as ICU does", async () => {
    const { englishDefault } = await import(COLLATE);
    const linux = (env, argv = []) => englishDefault(env, "linux", argv);
    expect(linux({})).toBe(true);
    expect(linux({ LANG: "C" })).toBe(true);
    expect(linux({ LANG: "C.UTF-8" })).toBe(true);
    expect(linux({ LANG: "en_US.UTF-8" })).toBe(true);
    expect(linux({ LC_ALL: "en_GB.UTF-8", LANG: "da_DK.UTF-8" })).toBe(true);
    expect(linux({ LANG: "da_DK.UTF-8" })).toBe(false);
    expect(linux({ LC_MESSAGES: "da_DK.UTF-8", LANG: "en_US.UTF-8" })).toBe(false);
    // Set but empty still counts for ICU (it gives the root locale, "und").
    expect(linux({ LC_ALL: "", LANG: "en_US.UTF-8" })).toBe(false);
    expect(linux({ LANG: "en_US@euro" })).toBe(false);
    expect(linux({}, ["--icu-locale=da"])).toBe(false);
    expect(linux({ NODE_OPTIONS: "--icu-locale=da" })).toBe(false);
    expect(englishDefault({}, "darwin", [])).toBe(false);
    expect(englishDefault({}, "win32", [])).toBe(false);
  });

  // Sessions whose `modified` and mtimes are all equal: list() and listAll() then keep the
  // name order, so any difference from the reference's order shows. One folder of printable
  // ASCII names (sorted by the core under English), one with a name that is not (sorted
  // with localeCompare).
  const ASCII = ["aa", "ab", "Ab", "aB", "a_b", "a-b", "a.b", "a0", "az", "b", "Z"];
  const makeTied = (name, names) => {
    const dir = join(root, "sessions", name);
    mkdirSync(dir, { recursive: true });
    names.forEach((n, i) => {
      const file = join(dir, `2024-01-01T00-00-00-000Z_${n}.jsonl`);
      const header = { type: "session", version: 3, id: `s${i}`, timestamp: "2024-01-01T00:00:00.000Z", cwd: CWD };
      writeFileSync(file, `${JSON.stringify(header)}\n`);
      utimesSync(file, 1_700_000_000, 1_700_000_000);
    });
    return dir;
  };
  const folders = () => [makeTied("--ascii--", ASCII), makeTied("--other--", [...ASCII, "å"])];

  for (const [label, locale] of [
    ["en_US", { LANG: "en_US.UTF-8" }],
    ["no locale set", {}],
    ["da_DK", { LANG: "da_DK.UTF-8" }],
    ["empty LC_ALL", { LC_ALL: "", LANG: "en_US.UTF-8" }],
  ]) {
    it(`list and listAll keep the reference's order of tied sessions (${label})`, () => {
      const env = withLocale(locale);
      for (const dir of folders()) {
        const ref = JSON.parse(node([LIST_CHILD, "ref", dir, CWD], env)).out;
        const ours = JSON.parse(node([LIST_CHILD, "ours", dir, CWD], env)).out;
        expect(ours).toEqual(ref);
        expect(ref.listed.length).toBeGreaterThanOrEqual(11);
      }
    });
  }

  it.skipIf(BUN)("the tied folder's order differs between locales (so the cases above can fail)", () => {
    const [dir] = folders();
    const order = (locale) => JSON.parse(node([LIST_CHILD, "ref", dir, CWD], withLocale(locale))).out.listed;
    expect(order({ LANG: "da_DK.UTF-8" })).not.toEqual(order({ LANG: "en_US.UTF-8" }));
  });
});
