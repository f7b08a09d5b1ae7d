// The pi release watch (.github/workflows/pi-release-watch.yml): is pi's newest release in the verified
// table (pi/verified.json)? If not, verify it (scripts/verify-pi.mjs) and leave what the workflow needs
// to open a pull request adding its row (verified) or an issue with the report (not verified).
//
//   node scripts/pi-release-watch.mjs [--version <v>] [--dry-run] [--out <dir>] [--table <file>] [--quick] [--no-cli]
//
// --version   the release to look at (default: `npm view @earendil-works/pi-coding-agent version`)
// --dry-run   say what would be done, verify nothing
// --out       where outcome.json ({ version, verified, title, body }), body.md (the pull request's or
//             the issue's body) and verify.json (verify-pi's --json) go (default .cache/pi-release-watch)
// --table     the table to look in and to add the row to (default pi/verified.json)
// --quick, --no-cli  passed to verify-pi
// With $GITHUB_OUTPUT set, appends action=none|pr|issue, version=<v>, verified=true|false and title=<title>.
// Exits 0 when there is nothing to do or verify-pi gave a verdict (either way), 1 when that failed, 2 on bad usage.
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { PI_PACKAGE, REPO } from "./pi-cache.mjs";

const USAGE =
  "usage: node scripts/pi-release-watch.mjs [--version <v>] [--dry-run] [--out <dir>] [--table <file>] [--quick] [--no-cli]";
const usage = (why) => {
  console.error(`pi-release-watch: ${why}\n${USAGE}`);
  process.exit(2);
};

const DEFAULT_TABLE = join(REPO, "pi", "verified.json");
let parsed;
try {
  parsed = parseArgs({
    options: {
      version: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      out: { type: "string", default: join(REPO, ".cache", "pi-release-watch") },
      table: { type: "string", default: DEFAULT_TABLE },
      quick: { type: "boolean", default: false },
      "no-cli": { type: "boolean", default: false },
    },
  }).values;
} catch (e) {
  usage(e.message);
}
const opts = {
  version: parsed.version ?? null,
  dryRun: parsed["dry-run"],
  out: resolve(parsed.out),
  table: parsed.table === DEFAULT_TABLE ? DEFAULT_TABLE : resolve(parsed.table),
};
/** What verify:pi is run with. */
const pass = [...(parsed.quick ? ["--quick"] : []), ...(parsed["no-cli"] ? ["--no-cli"] : [])];
if (opts.version !== null && !/^\d+\.\d+\.\d+(?:[-+][\w.-]+)?$/.test(opts.version))
  usage(`${JSON.stringify(opts.version)} is not a version`);

/** Appends `key=value` lines to $GITHUB_OUTPUT (one line each; values here never hold a newline). */
function output(values) {
  const file = process.env.GITHUB_OUTPUT;
  if (!file) return;
  appendFileSync(
    file,
    Object.entries(values)
      .map(([k, v]) => `${k}=${String(v).replace(/\n/g, " ")}\n`)
      .join(""),
  );
}

// the release
let version = opts.version;
if (!version) {
  try {
    version = execFileSync("npm", ["view", PI_PACKAGE, "version"], { encoding: "utf8", timeout: 120_000 }).trim();
  } catch (e) {
    console.error(`pi-release-watch: npm view ${PI_PACKAGE} version failed: ${String(e.stderr ?? e.message).trim()}`);
    process.exit(1);
  }
  if (!/^\d+\.\d+\.\d+/.test(version)) {
    console.error(`pi-release-watch: npm view says ${JSON.stringify(version)}, not a version`);
    process.exit(1);
  }
  console.log(`pi's newest release: ${version}`);
}

const table = JSON.parse(readFileSync(opts.table, "utf8"));
const tableName = opts.table === DEFAULT_TABLE ? "pi/verified.json" : opts.table;
if (table.releases.some((r) => r.pi === version)) {
  console.log(`pi ${version} is in the table (${tableName}): nothing to do`);
  output({ action: "none", version, verified: true });
  process.exit(0);
}
if (opts.dryRun) {
  console.log(
    `pi ${version} is not in the table (${tableName}): would run npm run verify:pi -- ${version} ${pass.join(" ")}`.trim(),
  );
  output({ action: "none", version, verified: false });
  process.exit(0);
}

// verify it
mkdirSync(opts.out, { recursive: true });
const jsonFile = join(opts.out, "verify.json");
const args = [join(REPO, "scripts", "verify-pi.mjs"), version, ...pass, "--json", jsonFile, "--write"];
if (opts.table !== DEFAULT_TABLE) args.push("--table", opts.table);
console.log(
  `pi ${version} is not in the table (${tableName}): node ${relative(REPO, args[0])} ${args.slice(1).join(" ")}`,
);
const r = spawnSync(process.execPath, args, { cwd: REPO, stdio: "inherit" });
if (r.status === 2 || !existsSync(jsonFile)) {
  console.error(`pi-release-watch: verify-pi gave no verdict (exit ${r.status ?? r.signal})`);
  process.exit(1);
}
const result = JSON.parse(readFileSync(jsonFile, "utf8"));

const run =
  process.env.GITHUB_RUN_ID && process.env.GITHUB_REPOSITORY
    ? `${process.env.GITHUB_SERVER_URL ?? "https://github.com"}/${process.env.GITHUB_REPOSITORY}/actions/runs/${process.env.GITHUB_RUN_ID}`
    : null;
const how = `\`npm run verify:pi -- ${version}${pass.length ? ` ${pass.join(" ")}` : ""}\``;
const lines = [];
let title;
if (result.verified) {
  title = `pi ${version}: add it to the verified table`;
  lines.push(
    `pi ${version} passes ${how}. This pull request adds its row to \`pi/verified.json\`, so that the gate lets it run on our SessionManager (no native rebuild; publish a release of the package to ship it).`,
    "",
    "```json",
    JSON.stringify(result.row, null, 2),
    "```",
  );
  if (result.notes?.length) lines.push("", ...result.notes.map((n) => `- ${n}`));
} else {
  title = `pi ${version} is not verified`;
  const failed = result.steps.filter((s) => !s.ok && !s.skipped);
  lines.push(
    `pi ${version} fails ${how}: until this is resolved, the gate refuses its session module if it differs from every row of \`pi/verified.json\` (pi then runs on its own SessionManager, with one notice).`,
    "",
    ...failed.map((s) => `- **${s.name}** failed: ${s.detail?.split("\n")[0] ?? ""}`),
  );
  if (result.notes?.length) lines.push(...result.notes.map((n) => `- ${n}`));
}
lines.push("", "<details><summary>verify:pi's report</summary>", "", "```", result.report, "```", "", "</details>");
if (run) lines.push("", `Run: ${run}`);
lines.push("", "_Opened by the pi release watch (`.github/workflows/pi-release-watch.yml`)._");
const body = `${lines.join("\n")}\n`;

writeFileSync(join(opts.out, "body.md"), body);
writeFileSync(
  join(opts.out, "outcome.json"),
  `${JSON.stringify({ version, verified: result.verified, title, body }, null, 2)}\n`,
);
output({ action: result.verified ? "pr" : "issue", version, verified: result.verified, title });
console.log(`\n${title}\n${join(opts.out, "outcome.json")}, ${join(opts.out, "body.md")}`);
process.exit(0);
