// The generator's randomness and text: a seeded RNG (mulberry32, hashSeed, Rng) and the prose,
// code and shell corpora that sessions are cut from (built once per process from a fixed seed).

export const MB = 1024 * 1024;
export const KB = 1024;

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
export const DIRS = [
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

export function getCorpus() {
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

export function proseOf(rng, len) {
  return windowOf(rng, getCorpus().prose, len, " ").trim();
}
export function codeOf(rng, len) {
  return windowOf(rng, getCorpus().code, len, "\n");
}
export function shellOf(rng, len) {
  return windowOf(rng, getCorpus().shell, len, "\n");
}
/** Larger outputs are made by joining several windows (a single pool may be too small). */
export function bigOf(fn, rng, len) {
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
