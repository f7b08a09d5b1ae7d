// Many generated sessions: folders for one cwd, agent dirs, the demo's data, and the benchmark's
// data sets (cached under .bench-data/ by GEN_VERSION, seed and size).

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeCwd, generateSession, sessionFileName } from "./session.mjs";
import { getCorpus, hashSeed, KB, MB, Rng } from "./text.mjs";

/** Bump when the output of the generator (any module under support/gen/) changes, so cached data is regenerated. */
export const GEN_VERSION = 1;

// ---------------------------------------------------------------------------
// Folders
// ---------------------------------------------------------------------------

/** Log-normal sizes scaled so they sum to about `totalBytes`. */
function sessionSizes(rng, count, totalBytes, median, sigma, max) {
  const raw = Array.from({ length: count }, () => median * Math.exp(sigma * rng.normal()));
  const sum = raw.reduce((a, b) => a + b, 0);
  return raw.map((x) => Math.max(2 * KB, Math.min(max, Math.round((x * totalBytes) / sum))));
}

export const YEAR_START = Date.UTC(2025, 5, 1, 8, 0, 0);

/**
 * A folder of sessions for one cwd (what `SessionManager.list(cwd, dir)` reads).
 * Returns { dir, cwd, sessions: meta[] }. Sessions are spread over ~300 days; some are forks.
 */
export function generateFolder(
  dir,
  { seed, count, totalBytes, cwd, median = 120 * KB, sigma = 1.3, max = 16 * MB, spanDays = 300, profile = {} },
) {
  mkdirSync(dir, { recursive: true });
  const rng = new Rng(hashSeed("folder", seed, cwd, count));
  const sizes = sessionSizes(rng, count, totalBytes, median, sigma, max);
  const span = spanDays * 86400000;
  const starts = Array.from({ length: count }, () => YEAR_START + Math.floor(rng.next() * span)).sort((a, b) => a - b);
  const sessions = [];
  for (let i = 0; i < count; i++) {
    const sseed = hashSeed("session", seed, cwd, i);
    const id = new Rng(sseed ^ 0x5bd1e995).uuidv7(starts[i]);
    const file = join(dir, sessionFileName(starts[i], id));
    const parentSession = i > 5 && rng.chance(0.05) ? sessions[rng.int(0, i - 1)].file : undefined;
    sessions.push(
      generateSession(file, {
        ...profile,
        seed: sseed,
        targetBytes: sizes[i],
        cwd,
        startMs: starts[i],
        id,
        parentSession,
        named: 0.7,
      }),
    );
  }
  return { dir, cwd, sessions };
}

/**
 * An agent dir: `<root>/sessions/--<encoded cwd>--/*.jsonl` for `projects` projects,
 * `sessions` sessions in total (Zipf-like per project). For `listAll()` with
 * PI_CODING_AGENT_DIR=<root>.
 */
export function generateAgentDir(
  root,
  { seed, projects = 40, sessions = 1200, totalBytes = 200 * MB, median = 60 * KB, profile = {} },
) {
  const rng = new Rng(hashSeed("agent", seed, projects, sessions));
  const C = getCorpus();
  const weights = Array.from({ length: projects }, (_, i) => 1 / (i + 1) ** 0.9);
  const wsum = weights.reduce((a, b) => a + b, 0);
  const counts = weights.map((w) => Math.max(1, Math.round((w * sessions) / wsum)));
  let diff = sessions - counts.reduce((a, b) => a + b, 0);
  for (let i = 0; diff !== 0; i = (i + 1) % projects) {
    if (diff > 0) {
      counts[i]++;
      diff--;
    } else if (counts[i] > 1) {
      counts[i]--;
      diff++;
    }
  }
  const out = [];
  const names = new Set();
  for (let p = 0; p < projects; p++) {
    let name;
    do name = `${C.ident().replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}-${rng.int(1, 99)}`;
    while (names.has(name));
    names.add(name);
    const cwd = rng.chance(0.8) ? `/home/dev/src/${name}` : `/home/dev/work/client-${rng.int(1, 9)}/${name}`;
    const dir = join(root, "sessions", encodeCwd(cwd));
    const share = Math.round((totalBytes * counts[p]) / sessions);
    const f = generateFolder(dir, {
      seed: hashSeed(seed, p),
      count: counts[p],
      totalBytes: share,
      cwd,
      median,
      sigma: 1.2,
      max: 8 * MB,
      profile,
    });
    out.push(f);
  }
  return { root, sessionsDir: join(root, "sessions"), projects: out };
}

/**
 * Small realistic agent dir for the demo: ~20 sessions, a few MB, with compactions,
 * branches, labels, names and context edits in reach of a small file.
 */
export function generateDemo(root, { seed = 42, cwd = "/home/dev/src/demo-app" } = {}) {
  const profile = { compactionEvery: [40, 100], branchChance: 0.04, minBranches: 1, imageChance: 0.02 };
  const main = generateFolder(join(root, "sessions", encodeCwd(cwd)), {
    seed,
    count: 16,
    totalBytes: 3.5 * MB,
    cwd,
    median: 120 * KB,
    sigma: 1.0,
    max: 1.2 * MB,
    spanDays: 30,
    profile,
  });
  const others = ["/home/dev/src/website", "/home/dev/src/infra-scripts"].map((ocwd, i) =>
    generateFolder(join(root, "sessions", encodeCwd(ocwd)), {
      seed: hashSeed(seed, "other", i),
      count: 2,
      totalBytes: 300 * KB,
      cwd: ocwd,
      median: 100 * KB,
      sigma: 0.8,
      spanDays: 30,
      profile,
    }),
  );
  return { root, sessionsDir: join(root, "sessions"), cwd, sessionDir: main.dir, projects: [main, ...others] };
}

// ---------------------------------------------------------------------------
// Cached benchmark data
// ---------------------------------------------------------------------------

export const SIZES = { S: 1 * MB, M: 20 * MB, L: 100 * MB };

/**
 * The image-heavy shape users report (pi #9613: a 2.6 GB session, mostly screenshots): every
 * user prompt carries a base64 screenshot of ~3 MB (raw 1.6–3 MB, median 2.2 MB), and a
 * compaction comes every ~40 prompts (~9 entries a prompt) and keeps the last few, so the
 * context holds a handful of images while the file holds hundreds. `generateSession` options.
 */
export const IMAGE_SESSION_SHAPE = {
  imageChance: 1,
  imageBytes: [2.2 * MB, 1.6 * MB, 3 * MB],
  compactionEvery: [300, 420],
};
export const BENCH_CWD = "/home/dev/src/pi-bench-app";

function readJson(p) {
  try {
    return JSON.parse(readFileSync(p, "utf8"));
  } catch {
    return null;
  }
}

/**
 * Generate (or reuse) the benchmark data set under `root`, keyed by seed and size.
 * @param {string} root e.g. <repo>/.bench-data
 * @param {{seed?: number, want?: string[], log?: (s: string) => void}} opts
 *   want: any of "S", "M", "L", "folder", "agent" (default all)
 */
export function ensureBenchData(root, { seed = 42, want = ["S", "M", "L", "folder", "agent"], log = () => {} } = {}) {
  const base = join(root, `v${GEN_VERSION}-seed${seed}`);
  mkdirSync(base, { recursive: true });
  const result = { base, cwd: BENCH_CWD };
  for (const key of want) {
    const t0 = Date.now();
    if (key in SIZES) {
      const file = join(base, `${key}-${SIZES[key]}.jsonl`);
      const metaPath = `${file}.meta.json`;
      let meta = readJson(metaPath);
      if (!meta || !existsSync(file)) {
        log(`generating ${key} session (~${SIZES[key] / MB} MB)…`);
        const tmp = `${file}.tmp`;
        meta = generateSession(tmp, {
          seed: hashSeed(seed, key),
          targetBytes: SIZES[key],
          cwd: BENCH_CWD,
          startMs: YEAR_START + 86400000,
        });
        renameSync(tmp, file);
        meta.file = file;
        writeFileSync(metaPath, JSON.stringify(meta));
        log(
          `  ${key}: ${(meta.bytes / MB).toFixed(1)} MB, ${meta.entries} entries, ${meta.compactions} compactions, ${meta.branches} branches (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
        );
      }
      result[key] = meta;
    } else if (key === "folder") {
      const dir = join(base, "folder-1000");
      const manifestPath = join(base, "folder-1000.manifest.json");
      let manifest = readJson(manifestPath);
      if (!manifest || !existsSync(dir)) {
        log("generating 1,000-session folder (~300 MB)…");
        rmSync(dir, { recursive: true, force: true });
        const f = generateFolder(dir, {
          seed: hashSeed(seed, "folder"),
          count: 1000,
          totalBytes: 300 * MB,
          cwd: BENCH_CWD,
        });
        manifest = summarizeFolder(f);
        writeFileSync(manifestPath, JSON.stringify(manifest));
        log(
          `  folder: ${manifest.count} sessions, ${(manifest.bytes / MB).toFixed(0)} MB (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
        );
      }
      result.folder = manifest;
    } else if (key === "agent") {
      const dir = join(base, "agent");
      const manifestPath = join(base, "agent.manifest.json");
      let manifest = readJson(manifestPath);
      if (!manifest || !existsSync(dir)) {
        log("generating agent dir (40 projects, ~1,200 sessions)…");
        rmSync(dir, { recursive: true, force: true });
        const a = generateAgentDir(dir, { seed: hashSeed(seed, "agent") });
        const projects = a.projects.map(summarizeFolder);
        manifest = {
          root: dir,
          sessionsDir: a.sessionsDir,
          projects: projects.map(({ dir, cwd, count, bytes }) => ({ dir, cwd, count, bytes })),
          count: projects.reduce((n, p) => n + p.count, 0),
          bytes: projects.reduce((n, p) => n + p.bytes, 0),
        };
        writeFileSync(manifestPath, JSON.stringify(manifest));
        log(
          `  agent: ${manifest.projects.length} projects, ${manifest.count} sessions, ${(manifest.bytes / MB).toFixed(0)} MB (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
        );
      }
      result.agent = manifest;
    } else {
      throw new Error(`unknown data set ${key}`);
    }
  }
  return result;
}

export function summarizeFolder(f) {
  const ids = f.sessions.map((s) => s.id);
  return {
    dir: f.dir,
    cwd: f.cwd,
    count: f.sessions.length,
    bytes: f.sessions.reduce((n, s) => n + s.bytes, 0),
    ids,
    largest: Math.max(...f.sessions.map((s) => s.bytes)),
  };
}
