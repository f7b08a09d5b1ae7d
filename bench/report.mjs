// Writes bench/results.md (tables) and bench/chart.svg (ratios, log scale) from
// the measurements of bench/run.mjs. Plain string templates, no dependencies.

import { execSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { basename, dirname, relative } from "node:path";
import { freshMarkdown } from "./fresh.mjs";

export function machineInfo() {
  const cpus = os.cpus();
  let commit = "";
  try {
    commit = execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
    if (
      execSync("git status --porcelain -- src index.js lib", { stdio: ["ignore", "pipe", "ignore"] })
        .toString()
        .trim()
    )
      commit += " (+ uncommitted changes)";
  } catch {}
  return {
    cpu: `${cpus[0]?.model?.trim() ?? "unknown CPU"} × ${cpus.length}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    date: new Date().toISOString(),
    loadavg: os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" "),
    commit,
  };
}

/** A duration for the tables: ms with 3 significant digits, µs below 1 ms. */
export const fmt = (ms) =>
  ms == null || Number.isNaN(ms)
    ? "–"
    : ms >= 100
      ? `${ms.toFixed(0)} ms`
      : ms >= 10
        ? `${ms.toFixed(1)} ms`
        : ms >= 1
          ? `${ms.toFixed(2)} ms`
          : `${(ms * 1000).toFixed(0)} µs`;
const mb = (kib) => `${(kib / 1024).toFixed(0)} MB`;
const ratioText = (r) => (r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`);

function mark(ratio, target) {
  if (ratio >= target) return "✅";
  if (ratio >= 1) return "⚠️ below target";
  return "❌ slower";
}

export function writeReport({ results, rss, fresh, machine, D, args, self, ours, elapsed, mdPath, svgPath }) {
  const floors = Object.fromEntries(
    results.filter((r) => r.single && r.status === "ok").map((r) => [r.op.key.replace("floor-", ""), r.floor.median]),
  );
  const timed = results.filter((r) => !r.single);
  const L = [];
  L.push(`# Benchmark results${args.quick ? " (quick subset)" : ""}`);
  L.push("");
  if (self)
    L.push(
      '> **BENCH_SELF=1**: "ours" is a second instance of the reference. These numbers only validate the suite; every ratio should be ≈1×.\n',
    );
  L.push(`Reference: \`@earendil-works/pi-coding-agent@1.6.0\` \`SessionManager\` (JS). Ours: ${ours}.`);
  L.push("");
  L.push("| machine | |");
  L.push("|---|---|");
  L.push(`| CPU | ${machine.cpu} |`);
  L.push(`| memory | ${machine.memory} |`);
  L.push(`| OS | ${machine.os} |`);
  L.push(`| Node | ${machine.node} |`);
  L.push(`| date | ${machine.date} |`);
  L.push(
    `| load average (1/5/15 min) | ${machine.loadavg} at start, ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")} at end (a shared machine: compare ratios, not times) |`,
  );
  if (machine.commit) L.push(`| commit | ${machine.commit} |`);
  if (machine.build) L.push(`| native build | ${machine.build} |`);
  L.push(`| run | ${args.quick ? "quick" : "full"}, seed ${args.seed}, ${elapsed.toFixed(0)} s |`);
  L.push("");
  L.push("## Time");
  L.push("");
  L.push(
    'Ratio = reference median / ours median: **>1 means ours is faster**. Medians of interleaved rounds (reference and ours alternate, each sample after a forced GC). "vs floor" divides a median by the floor for the same work: for a file, reading it with `readFileSync` plus one `JSON.parse` per line; for appends, one `JSON.stringify` and one `writeSync` per entry on a file opened once. A reference "vs floor" below the target means the target cannot be reached by any implementation that writes the same bytes synchronously.',
  );
  L.push("");
  L.push(
    "| operation | reference median | ours median | reference min–max | ours min–max | ratio | target | | rounds | vs floor (ref / ours) |",
  );
  L.push("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|");
  for (const r of timed) {
    const t = r.op.target ?? 1;
    if (r.status !== "ok") {
      L.push(`| ${r.op.label} | | | | | **${r.status.toUpperCase()}** | ${t}× | ❌ | | |`);
      continue;
    }
    const f = r.op.floor && floors[r.op.floor];
    const vsFloor = f ? `${(r.reference.median / f).toFixed(2)}× / ${(r.ours.median / f).toFixed(2)}×` : "";
    const rounds = `${r.rounds}${r.inner.reference > 1 || r.inner.ours > 1 ? ` (×${r.inner.reference}/${r.inner.ours} calls)` : ""}`;
    L.push(
      `| ${r.op.label} | ${fmt(r.reference.median)} | ${fmt(r.ours.median)} | ${fmt(r.reference.min)}–${fmt(r.reference.max)} | ${fmt(r.ours.min)}–${fmt(r.ours.max)} | **${ratioText(r.ratio)}** | ${t}× | ${mark(r.ratio, t)} | ${rounds} | ${vsFloor} |`,
    );
  }
  const floorRows = results.filter((r) => r.single && r.status === "ok");
  if (floorRows.length) {
    L.push("");
    L.push("| floor (implementation-independent) | median | min–max | rounds |");
    L.push("|---|---:|---:|---:|");
    for (const r of floorRows)
      L.push(`| ${r.op.label} | ${fmt(r.floor.median)} | ${fmt(r.floor.min)}–${fmt(r.floor.max)} | ${r.rounds} |`);
  }
  const bad = results.filter((r) => r.status !== "ok");
  if (bad.length) {
    L.push("");
    L.push("### Disagreements and errors (these operations were not timed)");
    L.push("");
    for (const r of bad) {
      L.push(`- **${r.op.label}** (${r.status})`);
      for (const d of r.diffs ?? [r.error])
        L.push(`  - \`${String(d).replace(/`/g, "'").replace(/\n\s*/g, " ⏎ ").slice(0, 600)}\``);
    }
  }
  L.push(...freshMarkdown(fresh));
  if (rss.length) {
    L.push("");
    L.push("## Peak RSS");
    L.push("");
    L.push(
      "One fresh process per implementation and family runs the operation once; peak = `VmHWM` from `/proc/self/status` (`process.resourceUsage().maxRSS` where there is no `/proc`: on Linux maxRSS survives `execve` and would include the parent benchmark process). Ratio = ours / reference: **<1 means ours uses less**. Baseline = peak before the operation (Node, the module, and the operation's inputs).",
    );
    L.push("");
    L.push("| family | reference peak | ours peak | ratio ours/ref | target | | baseline ref / ours |");
    L.push("|---|---:|---:|---:|---:|---|---:|");
    for (const r of rss) {
      if (r.error) L.push(`| ${r.op.label} | | | **ERROR** | | ❌ | |`);
      else if (r.floor) L.push(`| ${r.op.label} | ${mb(r.floor.peakKiB)} | | | | | ${mb(r.floor.baselineKiB)} |`);
      else {
        const t = r.op.rssTarget;
        const ok = t
          ? r.ratio <= t
            ? "✅"
            : r.ratio <= 1
              ? "⚠️ above target"
              : "❌ more"
          : r.ratio <= 1
            ? ""
            : "more memory";
        L.push(
          `| ${r.op.label} | ${mb(r.reference.peakKiB)} | ${mb(r.ours.peakKiB)} | **${r.ratio.toFixed(2)}×** | ${t ? `≤${t}×` : ""} | ${ok} | ${mb(r.reference.baselineKiB)} / ${mb(r.ours.baselineKiB)} |`,
        );
      }
    }
  }
  L.push("");
  L.push("## Data");
  L.push("");
  L.push(
    `Generated by \`support/gen.mjs\` (seed ${args.seed}), cached under \`.bench-data/\`, never committed: realistic pi 1.6.0 sessions (system prompt with tool schemas, user prompts, assistant thinking/text/tool calls with usage, tool results from 200 B to 50 KB+, occasional images, model/thinking changes, custom entries, labels, names, context edits, a compaction every few thousand entries, a few branches with summaries).`,
  );
  L.push("");
  L.push(
    `- S: ${(D.S.bytes / 2 ** 20).toFixed(1)} MB, ${D.S.entries} entries; M: ${(D.M.bytes / 2 ** 20).toFixed(1)} MB, ${D.M.entries} entries; L: ${(D.L.bytes / 2 ** 20).toFixed(1)} MB, ${D.L.entries} entries`,
  );
  L.push(
    `- folder: ${D.folder.count} sessions for one cwd, ${(D.folder.bytes / 2 ** 20).toFixed(0)} MB, log-normal sizes`,
  );
  L.push(
    `- agent dir (\`PI_CODING_AGENT_DIR\`): ${D.agent.projects} projects, ${D.agent.count} sessions, ${(D.agent.bytes / 2 ** 20).toFixed(0)} MB`,
  );
  L.push("- appends: the first 10,000 messages of L, appended one by one to a new session");
  L.push("");
  L.push(
    `Reproduce: \`npm run bench\` (or \`npm run bench -- --quick\`). Chart: [${basename(svgPath)}](${relative(dirname(mdPath), svgPath) || basename(svgPath)}).`,
  );
  L.push("");
  mkdirSync(dirname(mdPath), { recursive: true });
  writeFileSync(mdPath, L.join("\n"));
  writeFileSync(svgPath, chartSvg({ results: timed, rss, machine, args, self }));
}

export const esc = (s) =>
  String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Horizontal bars on a log axis, drawn from the 1× line; a diamond marks each target. */
export function chartSvg({ results, rss, machine, args, self }) {
  const rows = [];
  for (const r of results) {
    rows.push({
      label: r.op.label,
      value: r.status === "ok" ? r.ratio : null,
      status: r.status,
      target: r.op.target ?? 1,
      better: "higher",
    });
  }
  const rssRows = rss.filter((r) => !r.floor);
  if (rssRows.length) {
    rows.push({ section: "peak RSS, ours / reference (lower is better)" });
    for (const r of rssRows)
      rows.push({
        label: `RSS ${r.op.label}`,
        value: r.error ? null : r.ratio,
        status: r.error ? "error" : "ok",
        target: r.op.rssTarget ?? null,
        better: "lower",
      });
  }
  const values = rows.flatMap((r) => [r.value, r.target]).filter((v) => v > 0);
  // Axis bounds snapped to 1-2-5 steps, wide enough for every bar and target.
  const nice = (v, up) => {
    const e = Math.floor(Math.log10(v));
    const steps = [1, 2, 5, 10].map((m) => m * 10 ** e);
    return up ? steps.find((s) => s >= v * 0.999) : [...steps].reverse().find((s) => s <= v * 1.001);
  };
  const lo = Math.max(1e-3, nice(Math.min(0.2, ...values.map((v) => v / 1.3)), false));
  const hi = Math.min(1e4, nice(Math.max(20, ...values.map((v) => v * 1.6)), true));
  const W = 900;
  const left = 300;
  const right = W - 150;
  const top = 64;
  const rowH = 24;
  const H = top + rows.length * rowH + 56;
  const x = (v) => left + ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (right - left);
  const clampX = (v) => x(Math.max(lo, Math.min(hi, v)));
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  const title = `pi-session-native vs reference SessionManager${args.quick ? " (quick)" : ""}${self ? " — BENCH_SELF (reference vs reference)" : ""}`;
  out.push(`<text x="16" y="22" font-size="15" font-weight="600">${esc(title)}</text>`);
  out.push(
    `<text x="16" y="40" fill="#555">${esc(`time: reference / ours (right of 1× = ours faster); ◆ = target. ${machine.cpu}, Node ${machine.node}, ${machine.date.slice(0, 10)}`)}</text>`,
  );
  // Grid.
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++)
    for (const m of [1, 2, 5]) ticks.push(m * 10 ** e);
  const gridBottom = top + rows.length * rowH;
  for (const t of ticks.filter((t) => t >= lo * 0.999 && t <= hi * 1.001)) {
    const gx = x(t).toFixed(1);
    out.push(
      `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${gridBottom}" stroke="${t === 1 ? "#222" : "#e3e3e3"}" stroke-width="${t === 1 ? 1.5 : 1}"/>`,
    );
    out.push(
      `<text x="${gx}" y="${gridBottom + 16}" text-anchor="middle" fill="#555">${t >= 1 ? t : t.toString()}×</text>`,
    );
  }
  rows.forEach((r, i) => {
    const cy = top + i * rowH + rowH / 2;
    if (r.section) {
      out.push(`<text x="16" y="${cy + 4}" font-weight="600" fill="#333">${esc(r.section)}</text>`);
      return;
    }
    out.push(`<text x="${left - 8}" y="${cy + 4}" text-anchor="end">${esc(r.label)}</text>`);
    if (r.value == null) {
      out.push(
        `<text x="${x(1) + 6}" y="${cy + 4}" fill="#c62828" font-weight="600">${esc(r.status.toUpperCase())}</text>`,
      );
      return;
    }
    const good = r.better === "higher" ? r.value >= (r.target ?? 1) : r.target ? r.value <= r.target : r.value <= 1;
    const worse = r.better === "higher" ? r.value < 1 : r.value > 1;
    const color = good ? "#2e7d32" : worse ? "#c62828" : "#ef8f00";
    const x1 = x(1);
    const x2 = clampX(r.value);
    out.push(
      `<rect x="${Math.min(x1, x2).toFixed(1)}" y="${cy - 7}" width="${Math.max(1.5, Math.abs(x2 - x1)).toFixed(1)}" height="14" fill="${color}" rx="2"/>`,
    );
    const text = r.value >= 10 ? `${r.value.toFixed(1)}×` : `${r.value.toFixed(2)}×`;
    const goal = r.target ? `(target ${r.better === "higher" ? "≥" : "≤"}${r.target}×)` : "";
    out.push(
      `<text x="${right + 14}" y="${cy + 4}" fill="#222"><tspan font-weight="600" fill="${color}">${text}</tspan><tspan dx="5" fill="#777">${esc(goal)}</tspan></text>`,
    );
    if (r.target && r.target !== 1) {
      const mx = clampX(r.target);
      out.push(
        `<path d="M${mx.toFixed(1)} ${cy - 8} l5 8 l-5 8 l-5 -8 z" fill="#fff" stroke="#111" stroke-width="1.3"><title>target ${r.better === "higher" ? "≥" : "≤"}${r.target}×</title></path>`,
      );
    }
  });
  const ly = H - 18;
  const legend = [
    ["#2e7d32", "meets target"],
    ["#ef8f00", "better than reference, below target"],
    ["#c62828", "worse than reference"],
  ];
  let lx = 16;
  for (const [c, t] of legend) {
    out.push(
      `<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${c}" rx="2"/><text x="${lx + 17}" y="${ly}">${esc(t)}</text>`,
    );
    lx += 30 + t.length * 6.2;
  }
  out.push(
    `<path d="M${lx + 6} ${ly - 12} l5 7 l-5 7 l-5 -7 z" fill="#fff" stroke="#111" stroke-width="1.3"/><text x="${lx + 17}" y="${ly}">target</text>`,
  );
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
