// Fresh-process listing: what `pi --resume` and `pi -c` pay, each a new process. The in-process
// rows of run.mjs cannot show it: a fresh process has no rows in memory, only the listing index
// on disk (crates/pi-session-core/src/storage/listing/index/).
//
// Three cases, each over the 1,000-session folder, in interleaved rounds (reference, ours,
// ours, reference, …), one new Node process per sample, timing the `list(cwd, dir)` call:
//   first run    ours with an empty index dir (it scans every file, then writes the index);
//   warm index   ours with the index the previous runs left;
//   page cache dropped   the warm index again, with `echo 3 > /proc/sys/vm/drop_caches` before
//                every sample of both implementations (root only; skipped otherwise).
// Also reported: bytes read during the call (/proc/self/io) and the index's size on disk.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./fresh-child.mjs", import.meta.url));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Whether this process may drop the page cache (root on Linux). */
export function canDropCaches() {
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "1");
    return true;
  } catch {
    return false;
  }
}

function dropCaches() {
  spawnSync("sync");
  writeFileSync("/proc/sys/vm/drop_caches", "3");
}

function child(name, D, indexDir) {
  const r = spawnSync(process.execPath, [CHILD, name, D.cwd, D.folder.dir], {
    encoding: "utf8",
    env: { ...process.env, PI_SESSION_NATIVE_INDEX_DIR: indexDir },
  });
  if (r.status !== 0)
    throw new Error(`fresh ${name} failed: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ")}`);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

/** Runs the cases; returns rows for the report. */
export function measureFresh(D, { rounds, tmp, log = console.log }) {
  const indexDir = join(tmp, "fresh-index");
  const folderBytes = readdirSync(D.folder.dir).reduce((n, f) => n + statSync(join(D.folder.dir, f)).size, 0);
  const drop = canDropCaches();
  const cases = [
    {
      key: "first",
      label: "fresh process, first run (no index yet)",
      before: () => rmSync(indexDir, { recursive: true, force: true }),
    },
    { key: "warm", label: "fresh process, warm index", before: () => {} },
    ...(drop
      ? [{ key: "cold", label: "fresh process, warm index, page cache dropped", before: dropCaches, both: true }]
      : []),
  ];
  // The index exists for "warm" and "cold" (the first-run samples leave one).
  mkdirSync(indexDir, { recursive: true });
  const rows = [];
  for (const c of cases) {
    const xs = { reference: [], ours: [] };
    const io = { reference: [], ours: [] };
    let n;
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? ["ours", "reference"] : ["reference", "ours"];
      for (const name of order) {
        if (name === "ours" || c.both) c.before();
        const got = child(name, D, indexDir);
        if (n !== undefined && got.n !== n)
          throw new Error(`fresh ${c.key}: ${name} listed ${got.n} sessions, not ${n}`);
        n = got.n;
        xs[name].push(got.ms);
        io[name].push(got);
      }
    }
    const idx = existsSync(indexDir) ? readdirSync(indexDir).filter((f) => f.endsWith(".idx")) : [];
    const indexBytes = idx.reduce((s, f) => s + statSync(join(indexDir, f)).size, 0);
    const row = {
      key: c.key,
      label: c.label,
      reference: median(xs.reference),
      ours: median(xs.ours),
      ratio: median(xs.reference) / median(xs.ours),
      rounds,
      sessions: n,
      folderBytes,
      rchar: { reference: median(io.reference.map((x) => x.rchar)), ours: median(io.ours.map((x) => x.rchar)) },
      readBytes: {
        reference: median(io.reference.map((x) => x.readBytes)),
        ours: median(io.ours.map((x) => x.readBytes)),
      },
      indexBytes,
    };
    rows.push(row);
    log(
      `  ${c.label.padEnd(52)} ref ${row.reference.toFixed(0).padStart(6)} ms  ours ${row.ours.toFixed(1).padStart(6)} ms  ${row.ratio.toFixed(1).padStart(6)}×  ` +
        `ours read ${(row.rchar.ours / 2 ** 20).toFixed(1)} MB (${((100 * row.rchar.ours) / folderBytes).toFixed(2)}% of the folder; ${(row.readBytes.ours / 2 ** 20).toFixed(1)} MB from storage)  ×${rounds}`,
    );
  }
  if (!drop) log("  (page cache not dropped: needs root for /proc/sys/vm/drop_caches)");
  return { rows, dropped: drop };
}

/** The report's section. */
export function freshMarkdown(fresh) {
  if (!fresh?.rows.length) return [];
  const mb = (b) => `${(b / 2 ** 20).toFixed(1)} MB`;
  const pct = (b, of) => `${((100 * b) / of).toFixed(2)}%`;
  const L = ["", "## Fresh-process listing (the listing index)", ""];
  const f = fresh.rows[0];
  L.push(
    `\`list(cwd, dir)\` over the ${f.sessions}-session folder (${mb(f.folderBytes)}), one new Node process per sample, interleaved rounds; the time is the call's, not Node's start-up. Bytes read are the call's \`rchar\` (through \`read(2)\`) and \`read_bytes\` (fetched from storage), from \`/proc/self/io\`. Index size on disk: **${mb(fresh.rows.at(-1).indexBytes)}** (${pct(fresh.rows.at(-1).indexBytes, f.folderBytes)} of the folder).${fresh.dropped ? "" : " The page cache could not be dropped here (not root): no cold-cache row."}`,
  );
  L.push("");
  L.push(
    "| case | reference median | ours median | ratio | ours read (rchar) | ours from storage | reference read | rounds |",
  );
  L.push("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of fresh.rows)
    L.push(
      `| ${r.label} | ${r.reference.toFixed(0)} ms | ${r.ours.toFixed(1)} ms | **${r.ratio.toFixed(1)}×** | ${mb(r.rchar.ours)} (${pct(r.rchar.ours, r.folderBytes)}) | ${mb(r.readBytes.ours)} (${pct(r.readBytes.ours, r.folderBytes)}) | ${mb(r.rchar.reference)} | ${r.rounds} |`,
    );
  return L;
}
