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

import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Bump when the output of the generator changes, so cached data is regenerated. */
export const GEN_VERSION = 1;

const MB = 1024 * 1024;
const KB = 1024;

// ---------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------

/** mulberry32: tiny, fast, good enough for test data. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Derive a 32-bit seed from any values (xmur3-style string hash). */
export function hashSeed(...parts) {
  const str = parts.join("\u0000");
  let h = 1779033703 ^ str.length;
  for (let i = 0; i < str.length; i++) {
    h = Math.imul(h ^ str.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  h = Math.imul(h ^ (h >>> 16), 2246822507);
  h = Math.imul(h ^ (h >>> 13), 3266489909);
  return (h ^ (h >>> 16)) >>> 0;
}

export class Rng {
  constructor(seed) {
    this.next = mulberry32(seed);
  }
  /** Integer in [lo, hi] inclusive. */
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p) {
    return this.next() < p;
  }
  pick(arr) {
    return arr[Math.floor(this.next() * arr.length)];
  }
  /** Standard normal (Box-Muller). */
  normal() {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
  /** Log-normal with the given median, clamped to [lo, hi]. */
  logn(median, sigma, lo, hi) {
    const x = Math.round(median * Math.exp(sigma * this.normal()));
    return Math.max(lo, Math.min(hi, x));
  }
  hex(n) {
    let s = "";
    while (s.length < n)
      s += Math.floor(this.next() * 0x100000000)
        .toString(16)
        .padStart(8, "0");
    return s.slice(0, n);
  }
  base62(n) {
    const A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let s = "";
    for (let i = 0; i < n; i++) s += A[Math.floor(this.next() * 62)];
    return s;
  }
  /** Random bytes as base64 (fake image / signature payloads). */
  base64(bytes) {
    const buf = Buffer.allocUnsafe(bytes + 3);
    for (let i = 0; i < bytes; i += 4) buf.writeUInt32LE(Math.floor(this.next() * 0x100000000), i);
    return buf.subarray(0, bytes).toString("base64");
  }
  /** uuidv7-shaped id for a given millisecond time. */
  uuidv7(ms) {
    const t = ms.toString(16).padStart(12, "0");
    const r = this.hex(20);
    const variant = ((parseInt(r[3], 16) & 0x3) | 0x8).toString(16);
    return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${r.slice(0, 3)}-${variant}${r.slice(4, 7)}-${r.slice(8, 20)}`;
  }
}

// ---------------------------------------------------------------------------
// Text corpora (built once per process from a fixed seed)
// ---------------------------------------------------------------------------

const WORDS = (
  "the a to of and in is that this we it for with on be as by from at or an not are should now " +
  "let me check look see need will can would could then so but because which when while after before " +
  "function file test error update change implementation module session entry entries parser build " +
  "config type value return call handler path directory cache index tree branch leaf parent child " +
  "context message messages compaction summary tool result output input stream buffer line lines " +
  "json string number object array map set key keys order field fields schema option options flag " +
  "async await promise callback event listener timeout retry signal abort worker thread pool queue " +
  "read write append rename delete create open close flush sync lock unlock atomic temp backup " +
  "fix bug issue regression failing passing green red coverage benchmark profile memory allocation " +
  "performance latency throughput faster slower simple clean refactor extract inline rename move " +
  "component props state render hook effect reducer store selector route request response header " +
  "server client api endpoint token auth user users account permission role database query migration " +
  "first second next last previous current existing new old both each every other same different " +
  "small large huge tiny empty missing invalid valid correct wrong exact expected actual unexpected " +
  "here there where what why how done todo plan step steps approach idea option tradeoff decision"
).split(" ");
const NON_ASCII = [
  "—",
  "→",
  "“quoted”",
  "naïve",
  "café",
  "über",
  "✓",
  "✗",
  "…",
  "±",
  "µs",
  "日本語",
  "🎉",
  "🚀",
  "Größe",
];
const IDENTS = (
  "session entry entries parser index tree node leaf parent child context message compaction summary " +
  "buffer stream reader writer handler config options state cache store queue worker result value " +
  "path file dir name id key map list items count total offset limit cursor token user request response"
).split(" ");
const TYPES = [
  "string",
  "number",
  "boolean",
  "Entry",
  "SessionEntry[]",
  "Map<string, Entry>",
  "Promise<void>",
  "Result<T>",
  "Buffer",
  "unknown",
];
const DIRS = [
  "src",
  "src/core",
  "src/utils",
  "src/cli",
  "lib",
  "test",
  "packages/agent/src",
  "packages/ai/src",
  "crates/core/src",
  "docs",
];
const EXTS = [".ts", ".ts", ".ts", ".tsx", ".rs", ".js", ".json", ".md", ".py", ".go"];

let corpus;

function buildCorpus() {
  const rng = new Rng(0xc0ffee);
  const word = () => (rng.chance(0.01) ? rng.pick(NON_ASCII) : rng.pick(WORDS));
  const ident = () => {
    const a = rng.pick(IDENTS);
    const b = rng.pick(IDENTS);
    return rng.chance(0.5) ? a + b[0].toUpperCase() + b.slice(1) : a;
  };
  const filePath = () =>
    `${rng.pick(DIRS)}/${ident().replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}${rng.pick(EXTS)}`;
  const sentence = () => {
    const n = rng.int(6, 24);
    const w = [];
    for (let i = 0; i < n; i++) {
      const r = rng.next();
      if (r < 0.04) w.push(`\`${ident()}()\``);
      else if (r < 0.06) w.push(`\`${filePath()}\``);
      else if (r < 0.07) w.push(`"${word()}"`);
      else w.push(word());
    }
    w[0] = w[0][0].toUpperCase() + w[0].slice(1);
    return `${w.join(" ")}${rng.pick([".", ".", ".", ":", "?", "!"])}`;
  };
  // Prose: paragraphs, bullet lists, headings, inline code.
  const prose = [];
  let len = 0;
  while (len < 1.5 * MB) {
    const r = rng.next();
    let block;
    if (r < 0.12) block = `## ${sentence().slice(0, -1)}`;
    else if (r < 0.3) {
      const items = [];
      for (let i = rng.int(2, 6); i > 0; i--) items.push(`- ${sentence()}`);
      block = items.join("\n");
    } else if (r < 0.36) {
      const lines = [];
      for (let i = rng.int(2, 8); i > 0; i--) lines.push(`  ${ident()}(${ident()}, "${word()}");`);
      block = `\`\`\`ts\n${lines.join("\n")}\n\`\`\``;
    } else {
      const s = [];
      for (let i = rng.int(1, 6); i > 0; i--) s.push(sentence());
      block = s.join(" ");
    }
    prose.push(block);
    len += block.length + 2;
  }
  // Code: TypeScript and Rust with quotes, backslashes, tabs, template strings.
  const code = [];
  len = 0;
  while (len < 2 * MB) {
    const lines = [];
    const f = ident();
    const v = ident();
    if (rng.chance(0.7)) {
      lines.push(`/** ${sentence()} */`);
      lines.push(
        `export ${rng.chance(0.3) ? "async " : ""}function ${f}(${v}: ${rng.pick(TYPES)}, options: { ${ident()}?: ${rng.pick(TYPES)} } = {}): ${rng.pick(TYPES)} {`,
      );
      for (let i = rng.int(3, 18); i > 0; i--) {
        const r = rng.next();
        if (r < 0.2)
          lines.push(`\tconst ${ident()} = ${v}.${ident()}(${JSON.stringify(word())}, ${rng.int(0, 4096)});`);
        else if (r < 0.35)
          lines.push(
            `\tif (!${v}.${ident()} || ${v}.${ident()}.length === 0) {\n\t\tthrow new Error(\`${sentence()} \${${v}.id}\`);\n\t}`,
          );
        else if (r < 0.45) lines.push(`\tconst re = /^([a-z0-9_-]+)\\.(\\d+)\\s*$/i; // ${word()} ${word()}`);
        else if (r < 0.55) lines.push(`\t// ${sentence()}`);
        else if (r < 0.65)
          lines.push(`\tfor (const ${ident()} of ${v}.${ident()}) {\n\t\t${ident()}.push('${word()}\\n');\n\t}`);
        else if (r < 0.75)
          lines.push(`\tawait writeFile(join(dir, "${filePath()}"), JSON.stringify(${v}, null, 2) + "\\n", "utf8");`);
        else lines.push(`\treturn ${v}.${ident()}?.${ident()} ?? ${rng.chance(0.5) ? "null" : `"${word()}"`};`);
      }
      lines.push("}");
    } else {
      lines.push(`/// ${sentence()}`);
      lines.push(
        `pub fn ${f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}(${v.toLowerCase()}: &${rng.pick(["str", "[u8]", "Path", "Entry"])}) -> Result<${rng.pick(["usize", "String", "Vec<Entry>", "()"])}, Error> {`,
      );
      for (let i = rng.int(3, 14); i > 0; i--) {
        const r = rng.next();
        if (r < 0.3)
          lines.push(
            `    let ${ident().toLowerCase()} = ${v.toLowerCase()}.iter().filter(|e| e.kind == b'"').count();`,
          );
        else if (r < 0.5) lines.push(`    // ${sentence()}`);
        else if (r < 0.7)
          lines.push(
            `    if line.ends_with("\\r\\n") {\n        return Err(Error::new(format!("{}: {:?}", "${word()}", line)));\n    }`,
          );
        else lines.push(`    writeln!(out, "{}\\t{}", ${rng.int(0, 999)}, "${word()}")?;`);
      }
      lines.push("    Ok(Default::default())\n}");
    }
    const block = lines.join("\n");
    code.push(block);
    len += block.length + 2;
  }
  // Shell output: test runners, compilers, git, ls.
  const shell = [];
  len = 0;
  while (len < 1 * MB) {
    const r = rng.next();
    let line;
    if (r < 0.2) line = ` ${rng.chance(0.9) ? "✓" : "×"} ${filePath()} (${rng.int(1, 80)} tests) ${rng.int(2, 900)}ms`;
    else if (r < 0.3)
      line = `error[E0${rng.int(100, 799)}]: ${sentence()}\n  --> ${filePath()}:${rng.int(1, 900)}:${rng.int(1, 80)}\n   |\n${rng.int(1, 900)} |     let x = ${ident()}(&${ident()});\n   |             ^^^^^ ${sentence()}`;
    else if (r < 0.45)
      line = `commit ${rng.hex(40)}\nAuthor: Dev ${rng.pick(["One", "Two", "Three"])} <dev@example.com>\nDate:   Mon Mar ${rng.int(1, 28)} ${rng.int(10, 23)}:${rng.int(10, 59)}:${rng.int(10, 59)} 2026 +0100\n\n    ${sentence()}\n`;
    else if (r < 0.6)
      line = `-rw-r--r--  1 dev  staff  ${String(rng.int(10, 99999)).padStart(6)} Mar ${String(rng.int(1, 28)).padStart(2)} ${rng.int(10, 23)}:${rng.int(10, 59)} ${filePath()}`;
    else if (r < 0.75) line = `${filePath()}:${rng.int(1, 2000)}:    ${ident()}(${JSON.stringify(word())});`;
    else if (r < 0.85)
      line = `   Compiling ${ident()} v0.${rng.int(1, 30)}.${rng.int(0, 9)} (/home/dev/src/${ident()})`;
    else
      line = `[${rng.int(10, 23)}:${rng.int(10, 59)}:${rng.int(10, 59)}] ${rng.pick(["INFO", "WARN", "DEBUG", "ERROR"])} ${sentence()}`;
    shell.push(line);
    len += line.length + 1;
  }
  return {
    prose: prose.join("\n\n"),
    code: code.join("\n\n"),
    shell: shell.join("\n"),
    filePath,
    ident,
    sentence,
  };
}

function getCorpus() {
  corpus ??= buildCorpus();
  return corpus;
}

/** A window of about `len` chars from `pool`, cut at separators so no surrogate pair is split. */
function windowOf(rng, pool, len, sep) {
  if (len >= pool.length - 2) return pool;
  let start = rng.int(0, pool.length - len - 1);
  const s = pool.indexOf(sep, start);
  start = s === -1 || s > pool.length - len ? 0 : s + sep.length;
  let end = pool.indexOf(sep, start + len);
  if (end === -1) end = pool.length;
  return pool.slice(start, end);
}

function proseOf(rng, len) {
  return windowOf(rng, getCorpus().prose, len, " ").trim();
}
function codeOf(rng, len) {
  return windowOf(rng, getCorpus().code, len, "\n");
}
function shellOf(rng, len) {
  return windowOf(rng, getCorpus().shell, len, "\n");
}
/** Larger outputs are made by joining several windows (a single pool may be too small). */
function bigOf(fn, rng, len) {
  if (len < 512 * KB) return fn(rng, len);
  const parts = [];
  let n = 0;
  while (n < len) {
    const p = fn(rng, 256 * KB);
    parts.push(p);
    n += p.length + 1;
  }
  return parts.join("\n");
}

// ---------------------------------------------------------------------------
// Message builders (shapes as pi 1.6.0 writes them)
// ---------------------------------------------------------------------------

const TOOLS = [
  {
    name: "read",
    description:
      "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path to the file to read (relative or absolute)" },
        offset: { type: "number", description: "Line number to start reading from (1-indexed)" },
        limit: { type: "number", description: "Maximum number of lines to read" },
      },
      required: ["path"],
      additionalProperties: false,
    },
  },
  {
    name: "bash",
    description:
      "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "Bash command to execute" },
        timeout: { type: "number", description: "Timeout in seconds (optional, no default timeout)" },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
  {
    name: "edit",
    description:
      "Edit a file by replacing exact text. The oldText must match exactly (including whitespace). Use this for precise, surgical edits.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path to the file to edit (relative or absolute)" },
        oldText: { type: "string", description: "Exact text to find and replace (must match exactly)" },
        newText: { type: "string", description: "New text to replace the old text with" },
      },
      required: ["path", "oldText", "newText"],
      additionalProperties: false,
    },
  },
  {
    name: "write",
    description:
      "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path to the file to write (relative or absolute)" },
        content: { type: "string", description: "Content to write to the file" },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
  },
  {
    name: "grep",
    description:
      "Search file contents for a regex pattern. Returns matching lines with file paths and line numbers. Respects .gitignore.",
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Search pattern (regex or literal string)" },
        path: { type: "string", description: "Directory or file to search (default: current directory)" },
        glob: { type: "string", description: "Filter files by glob pattern, e.g. '*.ts'" },
        ignoreCase: { type: "boolean", description: "Case-insensitive search (default: false)" },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
  },
  {
    name: "find",
    description:
      "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore.",
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Glob pattern to match files, e.g. '*.ts', '**/*.json'" },
        path: { type: "string", description: "Directory to search in (default: current directory)" },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
  },
  {
    name: "ls",
    description:
      "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Directory to list (default: current directory)" },
        limit: { type: "number", description: "Maximum number of entries to return (default: 500)" },
      },
      additionalProperties: false,
    },
  },
];
const TOOL_WEIGHTS = [
  ["read", 34],
  ["bash", 30],
  ["edit", 18],
  ["grep", 7],
  ["write", 5],
  ["find", 3],
  ["ls", 3],
];
const TOOL_TOTAL = TOOL_WEIGHTS.reduce((a, [, w]) => a + w, 0);

const MODELS = [
  { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", price: [3, 15, 0.3, 3.75] },
  { api: "anthropic-messages", provider: "anthropic", model: "claude-opus-4-5", price: [5, 25, 0.5, 6.25] },
  { api: "openai-responses", provider: "openai", model: "gpt-5.1-codex", price: [1.25, 10, 0.125, 0] },
  { api: "google-generative-ai", provider: "google", model: "gemini-3-pro-preview", price: [2, 12, 0.2, 0] },
];
const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
const CUSTOM_TYPES = ["todo-state", "plan-mode", "git-checkpoint", "permission-gate", "subagent-run"];

function pickTool(rng) {
  let r = rng.next() * TOOL_TOTAL;
  for (const [name, w] of TOOL_WEIGHTS) {
    r -= w;
    if (r < 0) return name;
  }
  return "read";
}

function systemPrompt(rng, cwd) {
  return [
    "You are an expert coding assistant operating inside pi, a coding agent harness. You help users by reading files, executing commands, editing code, and writing new files.",
    "",
    "Available tools:",
    ...TOOLS.map((t) => `- ${t.name}: ${t.description.split(".")[0]}`),
    "",
    "Guidelines:",
    proseOf(rng, rng.int(4 * KB, 9 * KB)),
    "",
    `Current date and time: ${new Date(1767225600000).toUTCString()}`,
    `Current working directory: ${cwd}`,
  ].join("\n");
}

function usageFor(rng, model, inputTokens, outputTokens) {
  const cacheRead = Math.max(0, Math.floor(inputTokens * (0.7 + 0.25 * rng.next())));
  const cacheWrite = Math.floor((inputTokens - cacheRead) * rng.next());
  const input = Math.max(1, inputTokens - cacheRead - cacheWrite);
  const [pi, po, pr, pw] = model.price;
  const cost = {
    input: (input * pi) / 1e6,
    output: (outputTokens * po) / 1e6,
    cacheRead: (cacheRead * pr) / 1e6,
    cacheWrite: (cacheWrite * pw) / 1e6,
    total: 0,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return {
    input,
    output: outputTokens,
    cacheRead,
    cacheWrite,
    totalTokens: input + outputTokens + cacheRead + cacheWrite,
    cost,
  };
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

class LineWriter {
  constructor(path) {
    this.fd = openSync(path, "w");
    this.chunks = [];
    this.pending = 0;
    this.bytes = 0;
  }
  line(obj) {
    const s = `${JSON.stringify(obj)}\n`;
    const n = Buffer.byteLength(s);
    this.bytes += n;
    this.chunks.push(s);
    this.pending += n;
    if (this.pending > 4 * MB) this.flush();
  }
  flush() {
    if (this.chunks.length) writeSync(this.fd, this.chunks.join(""));
    this.chunks = [];
    this.pending = 0;
  }
  close() {
    this.flush();
    closeSync(this.fd);
  }
}

export function encodeCwd(cwd) {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

export function sessionFileName(startMs, id) {
  return `${new Date(startMs).toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`;
}

// ---------------------------------------------------------------------------
// One session
// ---------------------------------------------------------------------------

/**
 * Write one realistic session file.
 * @param {string} file target path (overwritten)
 * @param {object} opts
 *   seed, targetBytes, cwd, startMs, id?, parentSession?,
 *   compactionEvery [min,max] entries between compactions (default [2000, 4000]),
 *   branchChance per turn (default 0.0015), minBranches (default: 1 for ≥ 4 MB, else 0),
 *   imageChance per user prompt (default 0.01), imageBytes [median, min, max] raw bytes of an image
 *   (its base64 is 4/3 of that; default [60 KB, 8 KB, 400 KB]), named (default 0.8)
 * @returns meta: { file, id, cwd, bytes, entries, messages, compactions, branches, leafId, startMs, endMs }
 */
export function generateSession(file, opts) {
  const rng = new Rng(opts.seed >>> 0);
  const C = getCorpus();
  const cwd = opts.cwd;
  const target = opts.targetBytes;
  const compactionEvery = opts.compactionEvery ?? [2000, 4000];
  const branchChance = opts.branchChance ?? 0.0015;
  const minBranches = opts.minBranches ?? (target >= 4 * MB ? 1 : 0);
  const imageChance = opts.imageChance ?? 0.01;
  const imageBytes = opts.imageBytes ?? [60 * KB, 8 * KB, 400 * KB];
  let t = opts.startMs;
  const id = opts.id ?? rng.uuidv7(t);

  const w = new LineWriter(file);
  const header = { type: "session", version: 3, id, timestamp: new Date(t).toISOString(), cwd };
  if (opts.parentSession) header.parentSession = opts.parentSession;
  w.line(header);

  const ids = new Set();
  const newId = () => {
    for (;;) {
      const x = rng.hex(8);
      if (!ids.has(x)) {
        ids.add(x);
        return x;
      }
    }
  };
  // The current branch, root first: ids and a kind per entry.
  const pathIds = [];
  const pathKinds = [];
  let leaf = null;
  let entries = 0;
  let messages = 0;
  let compactions = 0;
  let branches = 0;
  let sinceCompaction = 0;
  let nextCompaction = rng.int(compactionEvery[0], compactionEvery[1]);
  let lastCompactionPathIdx = 0;
  let contextTokens = 0;
  let model = MODELS[rng.chance(0.75) ? 0 : rng.int(1, MODELS.length - 1)];
  let readFiles = new Set();
  let modifiedFiles = new Set();

  const iso = () => new Date(t).toISOString();
  const emit = (kind, build) => {
    const eid = newId();
    const entry = build(eid, leaf, iso());
    w.line(entry);
    leaf = eid;
    pathIds.push(eid);
    pathKinds.push(kind);
    entries++;
    sinceCompaction++;
    return eid;
  };
  const emitMessage = (message) => {
    messages++;
    return emit(message.role, (eid, parentId, timestamp) => ({
      type: "message",
      id: eid,
      parentId,
      timestamp,
      message,
    }));
  };
  const tick = (lo, hi) => {
    t += rng.int(lo, hi);
  };

  // --- Session start: system prompt, model, thinking level.
  const sysMessage = {
    role: "system",
    content: systemPrompt(rng, cwd),
    ...(rng.chance(0.5)
      ? {
          sections: {
            agents_md: `<agents_md path="${cwd}/AGENTS.md">\n${proseOf(rng, rng.int(1 * KB, 6 * KB))}\n</agents_md>`,
            skills: `<skills>\n${TOOLS.map((x) => `- ${x.name}`).join("\n")}\n</skills>`,
          },
        }
      : {}),
    toolsAdded: TOOLS,
    timestamp: t,
  };
  tick(1, 5);
  emitMessage(sysMessage);
  emit("model_change", (eid, parentId, timestamp) => ({
    type: "model_change",
    id: eid,
    parentId,
    timestamp,
    provider: model.provider,
    modelId: model.model,
  }));
  emit("thinking_level_change", (eid, parentId, timestamp) => ({
    type: "thinking_level_change",
    id: eid,
    parentId,
    timestamp,
    thinkingLevel: rng.pick(["medium", "high", "low"]),
  }));

  const toolCall = (name) => {
    const callId = model.provider === "openai" ? `call_${rng.base62(24)}` : `toolu_01${rng.base62(22)}`;
    const p = C.filePath();
    let args;
    switch (name) {
      case "read":
        args = rng.chance(0.3) ? { path: p, offset: rng.int(1, 800), limit: rng.int(50, 400) } : { path: p };
        readFiles.add(p);
        break;
      case "bash":
        args = {
          command: rng.pick([
            "npm test -- --run",
            `cargo test --lib ${C.ident()}`,
            `git diff --stat && git status --short`,
            `rg -n "${C.ident()}" src/ | head -50`,
            `ls -la ${p.split("/").slice(0, -1).join("/")}`,
            "npm run build 2>&1 | tail -80",
            `git log --oneline -n ${rng.int(5, 40)}`,
            `node scripts/${C.ident()}.mjs --verbose`,
          ]),
          ...(rng.chance(0.2) ? { timeout: rng.pick([60, 120, 300, 600]) } : {}),
        };
        break;
      case "edit":
        args = {
          path: p,
          oldText: codeOf(rng, rng.logn(300, 0.8, 20, 4 * KB)),
          newText: codeOf(rng, rng.logn(350, 0.8, 20, 5 * KB)),
        };
        modifiedFiles.add(p);
        break;
      case "write":
        args = { path: p, content: codeOf(rng, rng.logn(3 * KB, 0.9, 200, 40 * KB)) };
        modifiedFiles.add(p);
        break;
      case "grep":
        args = { pattern: `${C.ident()}\\(`, path: rng.pick(DIRS), ...(rng.chance(0.4) ? { glob: "*.ts" } : {}) };
        break;
      case "find":
        args = { pattern: rng.pick(["**/*.ts", "*.json", "**/*.test.ts", "src/**/*.rs"]) };
        break;
      default:
        args = { path: rng.pick(DIRS) };
    }
    return { type: "toolCall", id: callId, name, arguments: args };
  };

  const toolResultText = (call) => {
    const name = call.name;
    if (name === "read") {
      // Mostly a few KB, sometimes a whole 50 KB page, rarely more.
      const len = rng.chance(0.08) ? rng.int(40 * KB, 52 * KB) : rng.logn(5 * KB, 1.0, 300, 50 * KB);
      return { text: codeOf(rng, len), isError: rng.chance(0.02) };
    }
    if (name === "bash") {
      const huge = rng.chance(0.0008);
      const len = huge ? rng.int(300 * KB, 1200 * KB) : rng.logn(1500, 1.3, 120, 60 * KB);
      const isError = rng.chance(0.08);
      let text = bigOf(shellOf, rng, len);
      if (isError) text += `\n\nCommand exited with code ${rng.int(1, 2)}`;
      return { text, isError };
    }
    if (name === "edit") {
      return { text: `Successfully replaced text in ${call.arguments.path}.`, isError: rng.chance(0.05) };
    }
    if (name === "write") {
      return {
        text: `Successfully wrote ${call.arguments.content.length} bytes to ${call.arguments.path}`,
        isError: false,
      };
    }
    return { text: shellOf(rng, rng.logn(1200, 1.0, 100, 12 * KB)), isError: false };
  };

  const assistant = (content, stopReason, outputTokens) => {
    const start = t;
    const durationMs = rng.int(800, 45000);
    tick(durationMs, durationMs + 30);
    const message = {
      role: "assistant",
      content,
      api: model.api,
      provider: model.provider,
      model: model.model,
      responseId: model.provider === "anthropic" ? `msg_01${rng.base62(22)}` : `resp_${rng.hex(32)}`,
      usage: usageFor(rng, model, Math.max(4000, contextTokens), outputTokens),
      stopReason,
      timestamp: start,
      durationMs,
    };
    emitMessage(message);
  };

  const branchPoint = () => {
    // A user prompt some turns back (after the newest compaction): re-ask from its parent.
    const lo = Math.max(lastCompactionPathIdx + 1, pathIds.length - 80);
    for (let tries = 0; tries < 20; tries++) {
      const i = rng.int(lo, pathIds.length - 2);
      if (i > 0 && pathKinds[i] === "user") return i - 1;
    }
    return -1;
  };

  let turn = 0;
  while (w.bytes < target) {
    turn++;
    tick(5000, 600000); // the user thinks, reads, types

    // Occasional state changes between turns.
    if (turn > 1 && rng.chance(0.015)) {
      model = rng.pick(MODELS);
      emit("model_change", (eid, parentId, timestamp) => ({
        type: "model_change",
        id: eid,
        parentId,
        timestamp,
        provider: model.provider,
        modelId: model.model,
      }));
    }
    if (turn > 1 && rng.chance(0.015)) {
      emit("thinking_level_change", (eid, parentId, timestamp) => ({
        type: "thinking_level_change",
        id: eid,
        parentId,
        timestamp,
        thinkingLevel: rng.pick(THINKING_LEVELS),
      }));
    }
    if (rng.chance(0.04)) {
      const customType = rng.pick(CUSTOM_TYPES);
      emit("custom", (eid, parentId, timestamp) => ({
        type: "custom",
        customType,
        data: {
          version: 1,
          items: Array.from({ length: rng.int(1, 6) }, (_, i) => ({
            id: i + 1,
            text: proseOf(rng, rng.int(20, 120)),
            done: rng.chance(0.5),
          })),
          updatedAt: t,
        },
        id: eid,
        parentId,
        timestamp,
      }));
    }

    // Branch: go back to an earlier point, summarise the abandoned path, continue there.
    const forceBranch = branches < minBranches && w.bytes > target * 0.55;
    if (turn > 3 && (forceBranch || rng.chance(branchChance))) {
      const bp = branchPoint();
      if (bp >= 0) {
        const fromId = leaf;
        const parentIdx = bp;
        pathIds.length = parentIdx + 1;
        pathKinds.length = parentIdx + 1;
        leaf = pathIds[parentIdx];
        branches++;
        tick(1000, 20000);
        emit("branch_summary", (eid, parentId, timestamp) => ({
          type: "branch_summary",
          id: eid,
          parentId,
          timestamp,
          fromId,
          summary: `The user explored an alternative approach and abandoned it.\n\n${proseOf(rng, rng.int(400, 2500))}`,
          details: { readFiles: [...readFiles].slice(0, 12), modifiedFiles: [...modifiedFiles].slice(0, 8) },
        }));
      }
    }

    // The user prompt.
    const text = proseOf(rng, rng.logn(250, 1.1, 8, 6 * KB));
    let content;
    if (rng.chance(imageChance)) {
      content = [
        { type: "text", text },
        {
          type: "image",
          data: rng.base64(rng.logn(imageBytes[0], 0.7, imageBytes[1], imageBytes[2])),
          mimeType: rng.pick(["image/png", "image/jpeg"]),
        },
      ];
    } else if (rng.chance(0.1)) {
      content = text; // plain string content also occurs
    } else {
      content = [{ type: "text", text }];
    }
    contextTokens += text.length >> 2;
    const userId = emitMessage({ role: "user", content, timestamp: t });
    tick(2, 40);

    if (turn <= 3 && rng.chance(opts.named ?? 0.8) && turn === 2) {
      emit("session_info", (eid, parentId, timestamp) => ({
        type: "session_info",
        id: eid,
        parentId,
        timestamp,
        name: proseOf(rng, rng.int(15, 50)).replace(/\n+/g, " ").trim(),
      }));
    }
    if (rng.chance(0.02)) {
      emit("label", (eid, parentId, timestamp) => ({
        type: "label",
        id: eid,
        parentId,
        timestamp,
        targetId: userId,
        label: rng.pick([
          "checkpoint",
          "good state",
          "before refactor",
          "bug repro",
          "try again from here",
          "✓ tests green",
        ]),
      }));
    }

    // Tool loop.
    const rounds = rng.chance(0.15) ? 0 : Math.min(25, Math.floor(-Math.log(1 - rng.next()) * 4));
    for (let r = 0; r < rounds && w.bytes < target * 1.02; r++) {
      const blocks = [];
      const thinking = model.provider === "anthropic" && rng.chance(0.75);
      if (thinking) {
        blocks.push({
          type: "thinking",
          thinking: proseOf(rng, rng.logn(600, 0.9, 40, 8 * KB)),
          thinkingSignature: rng.base64(rng.int(200, 900)),
        });
      }
      if (rng.chance(0.4)) blocks.push({ type: "text", text: proseOf(rng, rng.logn(200, 0.8, 20, 2 * KB)) });
      const calls = [];
      for (let k = rng.chance(0.75) ? 1 : rng.int(2, 4); k > 0; k--) calls.push(toolCall(pickTool(rng)));
      blocks.push(...calls);
      assistant(blocks, "toolUse", rng.int(40, 1500));
      for (const call of calls) {
        tick(30, 30000);
        const { text: out, isError } = toolResultText(call);
        contextTokens += out.length >> 2;
        const message = {
          role: "toolResult",
          toolCallId: call.id,
          toolName: call.name,
          content: [{ type: "text", text: out }],
          ...(call.name === "edit" && !isError
            ? {
                details: {
                  diff: `--- ${call.arguments.path}\n+++ ${call.arguments.path}\n@@ -${rng.int(1, 500)},7 +${rng.int(1, 500)},9 @@\n${codeOf(
                    rng,
                    400,
                  )
                    .split("\n")
                    .map((l, i) => (i % 3 === 0 ? `-${l}` : `+${l}`))
                    .join("\n")}`,
                  firstChangedLine: rng.int(1, 900),
                },
              }
            : {}),
          isError,
          timestamp: t,
        };
        emitMessage(message);
      }
    }
    // Final answer.
    const blocks = [];
    if (model.provider === "anthropic" && rng.chance(0.6)) {
      blocks.push({
        type: "thinking",
        thinking: proseOf(rng, rng.logn(500, 0.9, 40, 6 * KB)),
        thinkingSignature: rng.base64(rng.int(200, 900)),
      });
    }
    const answer = proseOf(rng, rng.logn(900, 0.9, 30, 12 * KB));
    blocks.push({ type: "text", text: answer });
    contextTokens += answer.length >> 2;
    assistant(blocks, rng.chance(0.97) ? "stop" : rng.pick(["length", "aborted", "error"]), rng.int(50, 4000));

    // Extension output that participates in context.
    if (rng.chance(0.015)) {
      tick(100, 5000);
      emit("custom_message", (eid, parentId, timestamp) => ({
        type: "custom_message",
        customType: rng.pick(["background-job", "file-watcher", "reminder"]),
        content: rng.chance(0.5)
          ? proseOf(rng, rng.int(60, 600))
          : [{ type: "text", text: shellOf(rng, rng.int(100, 1500)) }],
        display: rng.chance(0.8),
        details: { source: rng.pick(["watcher", "cron", "hook"]), seq: turn },
        id: eid,
        parentId,
        timestamp,
      }));
    }
    // Elide an old tool result from the model's context.
    if (rng.chance(0.012)) {
      const lo = Math.max(lastCompactionPathIdx + 1, pathIds.length - 60);
      for (let tries = 0; tries < 10; tries++) {
        const i = rng.int(lo, pathIds.length - 1);
        if (pathKinds[i] === "toolResult") {
          const targetId = pathIds[i];
          tick(5, 200);
          emit("context_edit", (eid, parentId, timestamp) => ({
            type: "context_edit",
            id: eid,
            parentId,
            timestamp,
            targetId,
            replacement: rng.chance(0.2)
              ? null
              : { content: [{ type: "text", text: `[output elided: ${rng.int(2, 60)} KB]` }] },
          }));
          break;
        }
      }
    }
    if (rng.chance(0.004)) {
      tick(10, 1000);
      emit("usage", (eid, parentId, timestamp) => ({
        type: "usage",
        id: eid,
        parentId,
        timestamp,
        kind: "cache_warm",
        provider: model.provider,
        model: model.model,
        usage: usageFor(rng, model, contextTokens, 1),
      }));
    }

    // Compaction every few thousand entries: summary plus a kept tail a few entries back.
    if (sinceCompaction >= nextCompaction) {
      let keep = pathIds.length - rng.int(4, 30);
      for (let i = keep; i < pathIds.length - 1; i++) {
        if (pathKinds[i] === "user") {
          keep = i;
          break;
        }
      }
      keep = Math.max(keep, lastCompactionPathIdx + 1);
      const firstKeptEntryId = pathIds[keep];
      tick(10000, 90000);
      const tokensBefore = rng.int(150000, 195000);
      const withUsage = rng.chance(0.7);
      const nowMs = t;
      emit("compaction", (eid, parentId, timestamp) => ({
        type: "compaction",
        id: eid,
        parentId,
        timestamp,
        summary: `## Goal\n${proseOf(rng, rng.int(200, 600))}\n\n## Progress\n### Done\n${proseOf(rng, rng.int(800, 3000))}\n\n### In Progress\n${proseOf(rng, rng.int(200, 900))}\n\n## Key Decisions\n${proseOf(rng, rng.int(300, 1200))}\n\n## Next Steps\n${proseOf(rng, rng.int(200, 800))}`,
        firstKeptEntryId,
        tokensBefore,
        details: { readFiles: [...readFiles].slice(-40), modifiedFiles: [...modifiedFiles].slice(-30) },
        ...(withUsage ? { usage: usageFor(rng, model, tokensBefore, rng.int(2000, 6000)) } : {}),
        systemMessage: { ...sysMessage, timestamp: nowMs },
      }));
      lastCompactionPathIdx = pathIds.length - 1;
      compactions++;
      sinceCompaction = 0;
      nextCompaction = rng.int(compactionEvery[0], compactionEvery[1]);
      contextTokens = rng.int(20000, 40000);
      readFiles = new Set();
      modifiedFiles = new Set();
    }
  }
  w.close();
  const endMs = t;
  if (opts.mtime !== false) utimesSync(file, new Date(endMs), new Date(endMs));
  return {
    file,
    id,
    cwd,
    bytes: w.bytes,
    entries,
    messages,
    compactions,
    branches,
    leafId: leaf,
    startMs: opts.startMs,
    endMs,
  };
}

// ---------------------------------------------------------------------------
// Folders
// ---------------------------------------------------------------------------

/** Log-normal sizes scaled so they sum to about `totalBytes`. */
function sessionSizes(rng, count, totalBytes, median, sigma, max) {
  const raw = Array.from({ length: count }, () => median * Math.exp(sigma * rng.normal()));
  const sum = raw.reduce((a, b) => a + b, 0);
  return raw.map((x) => Math.max(2 * KB, Math.min(max, Math.round((x * totalBytes) / sum))));
}

const YEAR_START = Date.UTC(2025, 5, 1, 8, 0, 0);

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

function summarizeFolder(f) {
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
