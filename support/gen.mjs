#!/usr/bin/env node
// Seeded generator of realistic pi 1.6.0 session files (JSONL, version 3).
//
// Used by the benchmark (bench/run.mjs) and by the demo. Files are written line by
// line with JSON.stringify, never through a SessionManager, so generating 100 MB
// takes seconds. The same seed and options always give the same bytes.
//
// CLI:
//   node support/gen.mjs --out DIR --preset demo        # ~20 sessions, a few MB, agent-dir layout
//   node support/gen.mjs --out DIR --preset S|M|L       # one session file of ~1 / 20 / 100 MB
//   node support/gen.mjs --out DIR --preset folder      # 1,000 sessions (~300 MB) for one cwd
//   node support/gen.mjs --out DIR --preset agent       # <DIR>/sessions/--<cwd>--/…, 40 projects, ~1,200 sessions
//   options: --seed N (default 42), --cwd PATH, --bytes N (override the size)
//
// Library: generateSession, generateFolder, generateAgentDir, generateDemo,
// ensureBenchData (cached by seed and size under .bench-data/), encodeCwd.
// This file is the public face (those exports and the CLI); the parts are in support/gen/:
// text.mjs (RNG, text corpora), messages.mjs (pi's tools, models, usage), session.mjs
// (generateSession, file names), data.mjs (folders, agent dirs, demo, bench data, GEN_VERSION).

import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  BENCH_CWD,
  generateAgentDir,
  generateDemo,
  generateFolder,
  summarizeFolder,
  SIZES,
  YEAR_START,
} from "./gen/data.mjs";
import { generateSession, sessionFileName } from "./gen/session.mjs";
import { hashSeed, MB, Rng } from "./gen/text.mjs";

export {
  BENCH_CWD,
  ensureBenchData,
  GEN_VERSION,
  generateAgentDir,
  generateDemo,
  generateFolder,
  IMAGE_SESSION_SHAPE,
  SIZES,
} from "./gen/data.mjs";
export { encodeCwd, generateSession, sessionFileName } from "./gen/session.mjs";
export { hashSeed, mulberry32, Rng } from "./gen/text.mjs";

// ---------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) continue;
    const [k, v] = a.includes("=")
      ? a.slice(2).split(/=(.*)/s)
      : [a.slice(2), argv[i + 1]?.startsWith("--") ? "true" : argv[++i]];
    args[k] = v ?? "true";
  }
  return args;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!args.out || args.help) {
    console.log(
      "usage: node support/gen.mjs --out DIR [--preset demo|S|M|L|folder|agent] [--seed N] [--cwd PATH] [--bytes N]\n" +
        "  demo (default): DIR/sessions/--<cwd>--/ with ~20 sessions (a few MB); use PI_CODING_AGENT_DIR=DIR",
    );
    process.exit(args.out ? 0 : 1);
  }
  const out = resolve(args.out);
  const seed = Number(args.seed ?? 42);
  const preset = args.preset ?? "demo";
  const t0 = Date.now();
  mkdirSync(out, { recursive: true });
  let summary;
  if (preset === "demo") {
    const d = generateDemo(out, { seed, ...(args.cwd ? { cwd: args.cwd } : {}) });
    const projects = d.projects.map((p) => ({
      cwd: p.cwd,
      dir: p.dir,
      sessions: p.sessions.map(({ file, id, bytes, entries, messages, compactions, branches }) => ({
        file,
        id,
        bytes,
        entries,
        messages,
        compactions,
        branches,
      })),
    }));
    summary = {
      preset,
      seed,
      agentDir: out,
      sessionsDir: d.sessionsDir,
      cwd: d.cwd,
      sessionDir: d.sessionDir,
      projects,
    };
    writeFileSync(join(out, "demo-manifest.json"), `${JSON.stringify(summary, null, 2)}\n`);
    const all = projects.flatMap((p) => p.sessions);
    console.log(
      `demo data in ${out}: ${all.length} sessions, ${(all.reduce((n, s) => n + s.bytes, 0) / MB).toFixed(1)} MB, ` +
        `${all.reduce((n, s) => n + s.compactions, 0)} compactions, ${all.reduce((n, s) => n + s.branches, 0)} branches\n` +
        `  cwd ${d.cwd}\n  session dir ${d.sessionDir}\n  manifest ${join(out, "demo-manifest.json")}\n` +
        `  export PI_CODING_AGENT_DIR=${out}`,
    );
  } else if (preset in SIZES) {
    const bytes = Number(args.bytes ?? SIZES[preset]);
    const cwd = args.cwd ?? BENCH_CWD;
    const startMs = YEAR_START + 86400000;
    const id = new Rng(hashSeed(seed, preset, "id")).uuidv7(startMs);
    summary = generateSession(join(out, sessionFileName(startMs, id)), {
      seed: hashSeed(seed, preset),
      targetBytes: bytes,
      cwd,
      startMs,
      id,
    });
    console.log(JSON.stringify(summary));
  } else if (preset === "folder") {
    const f = generateFolder(out, {
      seed: hashSeed(seed, "folder"),
      count: Number(args.count ?? 1000),
      totalBytes: Number(args.bytes ?? 300 * MB),
      cwd: args.cwd ?? BENCH_CWD,
    });
    summary = summarizeFolder(f);
    console.log(`${summary.count} sessions, ${(summary.bytes / MB).toFixed(1)} MB in ${out}`);
  } else if (preset === "agent") {
    const a = generateAgentDir(out, {
      seed: hashSeed(seed, "agent"),
      ...(args.bytes ? { totalBytes: Number(args.bytes) } : {}),
    });
    console.log(
      `${a.projects.length} projects, ${a.projects.reduce((n, p) => n + p.sessions.length, 0)} sessions in ${a.sessionsDir}`,
    );
  } else {
    console.error(`unknown preset ${preset}`);
    process.exit(1);
  }
  console.error(`(${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
