// Synthetic next pi releases, made from an installed one, for the gate's tests (__test__/pi/pi-gate,
// __test__/pi/run.mjs and package.mjs) and verify:pi's own check:
//   "rebundled"  what a release that did not touch the session module looks like: a new version, the
//                chunk holding the class renamed, and the bundler's numbered locals renumbered
//                (`stream2` -> `stream20`), as between pi 1.5.0 and 1.5.2. Behaviour unchanged.
//   "class"      a one-line behaviour change in the SessionManager class (getLeafId() returns
//                `this.leafId ?? null`), in the bundle and in dist/core/session-manager.js;
//   "listing"    a one-line behaviour change in buildSessionInfo, outside the class (the listing counts
//                one message more), in both forms.
// The gate must pass the first and refuse the other two.

import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CHUNKS = join("dist", "bundle", "chunks");
const MODULE = join("dist", "core", "session-manager.js");
const START = "var CURRENT_SESSION_VERSION=";

/** One-line edits per kind: [bundle text, its replacement, module text, its replacement]. */
const EDITS = {
  class: [
    "getLeafId(){return this.leafId}",
    "getLeafId(){return this.leafId??null}",
    "return this.leafId;",
    "return this.leafId ?? null;",
  ],
  listing: [
    "header=null,messageCount=0,",
    "header=null,messageCount=1,",
    "let messageCount = 0;",
    "let messageCount = 1;",
  ],
};

/** The chunk file holding the session module. */
function sessionChunk(piDir) {
  const dir = join(piDir, CHUNKS);
  const name = readdirSync(dir).find((f) => f.endsWith(".js") && readFileSync(join(dir, f), "utf8").includes(START));
  if (!name) throw new Error(`no chunk of ${dir} holds pi's session module`);
  return name;
}

function replaceOnce(file, from, to) {
  const text = readFileSync(file, "utf8");
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0)
    throw new Error(`${file}: expected ${JSON.stringify(from)} exactly once`);
  writeFileSync(file, text.slice(0, at) + to + text.slice(at + from.length));
}

/** Renumber the bundler's numbered locals of the session module's chunk, and rename the chunk file. */
function rebundle(piDir) {
  const dir = join(piDir, CHUNKS);
  const name = sessionChunk(piDir);
  let text = readFileSync(join(dir, name), "utf8");
  // A local is renumbered when it is numbered as a bundler numbers (`join6`, `stream2`: lowercase,
  // three letters or more, then digits; not `x00` of a `\x00` or `Z0` of a character range), bound
  // in this chunk (declared, a `,name=` continuation, an import alias), never a property name (an
  // object key `name:`, a shorthand `{name}`) and not named by an import/export clause (shared with
  // other chunks). A property access (`a.b2`, `a?.b2`) is not a local; a spread (`...b2`) is.
  // One pass over the text for each of these, then one to rename.
  const WORD = /(?<![\\\w$])(?<!(?<!\.)\.)([A-Za-z_$][\w$]*)/g;
  const numbered = /^[a-z][A-Za-z_$]{2,}\d+$/;
  const region = text.slice(text.indexOf(START));
  const candidates = new Set([...region.matchAll(WORD)].map((m) => m[1]).filter((id) => numbered.test(id)));
  const all = new Set([...text.matchAll(WORD)].map((m) => m[1]));
  const bound = new Set(
    [...text.matchAll(/(?:\b(?:let|const|var|class|function\*?)\s+|,|\sas\s)([A-Za-z_$][\w$]*)/g)].map((m) => m[1]),
  );
  const keys = new Set(
    [...text.matchAll(/(?<![\w$.?])([A-Za-z_$][\w$]*)\s*:/g), ...text.matchAll(/[{,]([A-Za-z_$][\w$]*)(?=[,}])/g)].map(
      (m) => m[1],
    ),
  );
  const shared = new Set(
    [...text.matchAll(/\b(?:import|export)\s*\{([^}]*)\}/g)].flatMap((m) => m[1].match(/[A-Za-z_$][\w$]*/g) ?? []),
  );
  const renames = new Map();
  for (const id of candidates)
    if (bound.has(id) && !keys.has(id) && !shared.has(id) && !all.has(`${id}0`)) renames.set(id, `${id}0`);
  text = text.replace(WORD, (m, id) => renames.get(id) ?? m);
  const renamed = renames.size;
  if (renamed === 0) throw new Error(`${name}: no numbered local to renumber`);
  const newName = "chunk-REBUNDLD.js";
  writeFileSync(join(dir, newName), text);
  rmSync(join(dir, name));
  // every file of the bundle that names the chunk
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".js")) {
        const t = readFileSync(p, "utf8");
        if (t.includes(name)) writeFileSync(p, t.split(name).join(newName));
      }
    }
  };
  walk(join(piDir, "dist", "bundle"));
  return { chunk: newName, renamed };
}

/**
 * A copy of the pi package at `from` (package.json and dist/) at `to`, changed as `kind` says, its
 * package.json saying `version` (default: the source's). Place `to` where pi's dependencies resolve
 * (below a node_modules that has them). Returns `to`.
 */
export function makeVariant(from, to, kind, version) {
  if (kind !== "rebundled" && !EDITS[kind]) throw new Error(`no pi variant ${JSON.stringify(kind)}`);
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  cpSync(join(from, "dist"), join(to, "dist"), { recursive: true });
  const pkg = JSON.parse(readFileSync(join(from, "package.json"), "utf8"));
  if (version) pkg.version = version;
  writeFileSync(join(to, "package.json"), JSON.stringify(pkg, null, "\t"));
  // no CHANGELOG.md: pi would show the entries newer than the agent dir last saw on start, over the notices
  for (const extra of ["README.md"]) if (existsSync(join(from, extra))) cpSync(join(from, extra), join(to, extra));
  if (kind === "rebundled") rebundle(to);
  else {
    const [bundleFrom, bundleTo, moduleFrom, moduleTo] = EDITS[kind];
    replaceOnce(join(to, CHUNKS, sessionChunk(to)), bundleFrom, bundleTo);
    replaceOnce(join(to, MODULE), moduleFrom, moduleTo);
  }
  return to;
}

export const VARIANTS = ["rebundled", "class", "listing"];

const REPO = join(import.meta.dirname, "..");
/** node_modules' pi (the devDependency, 1.6.0): what the tests make their variants from. */
export const DEV_PI_DIR = join(REPO, "node_modules", "@earendil-works", "pi-coding-agent");

/**
 * makeVariant() of node_modules' pi, placed under node_modules/.cache/pi-session-native-test/<name>/
 * where pi's dependencies resolve from the repo's node_modules. Returns the variant's package dir.
 */
export const devPiVariant = (name, kind, version) =>
  makeVariant(
    DEV_PI_DIR,
    join(
      REPO,
      "node_modules",
      ".cache",
      "pi-session-native-test",
      name,
      "node_modules",
      "@earendil-works",
      "pi-coding-agent",
    ),
    kind,
    version,
  );
