// Demo: the native SessionManager at work on a realistic session folder in a temp dir, then the
// pi-sessions command line on a generated agent dir. Creates sessions, appends, branches, labels,
// compacts, builds context, lists.
//
// It needs the pi-sessions binary: $PI_SESSIONS_BIN, else target/release/pi-sessions, else it is
// built with cargo. Without cargo it stops at once, with one line that says how to get it (exit 1),
// before anything is written. Its files are kept, in the folder it prints at the end.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const fail = (line) => {
  console.error(`demo: ${line}`);
  process.exit(1);
};

// The CLI first: a demo that cannot show its second half says so before the first.
const bin = process.env.PI_SESSIONS_BIN || join(repo, "target", "release", "pi-sessions");
if (process.env.PI_SESSIONS_BIN && !existsSync(bin)) fail(`PI_SESSIONS_BIN=${bin} does not exist`);
if (!existsSync(bin)) {
  const cargo = spawnSync("cargo", ["--version"], { encoding: "utf8" });
  if (cargo.error) {
    fail(
      "cargo is not on the PATH, and the pi-sessions CLI (target/release/pi-sessions) is not built: " +
        "install Rust from https://rustup.rs and run `npm run demo` again",
    );
  }
  console.log("building the pi-sessions CLI (cargo build --release --bin pi-sessions)…");
  const built = spawnSync("cargo", ["build", "--release", "--quiet", "--bin", "pi-sessions"], {
    cwd: repo,
    stdio: "inherit",
  });
  if (built.status !== 0 || !existsSync(bin)) {
    fail(`\`cargo build --release --bin pi-sessions\` failed (exit ${built.status}); see its errors above`);
  }
}

const { generateDemo } = await import("../support/gen.mjs");
const { SessionManager } = await import("../index.mjs");

const root = mkdtempSync(join(tmpdir(), "pi-session-native-demo-"));
process.env.PI_CODING_AGENT_DIR = join(root, "agent");
const cwd = join(root, "project");
const t0 = performance.now();

let rng = 42;
const rand = () => (rng = (rng * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const words = "the session tree branch label compact context model tool read file edit bash test rust node".split(" ");
const text = (n) => Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(" ");
const usage = {
  input: 100,
  output: 50,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 150,
  cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
};
const assistant = (t) => ({
  role: "assistant",
  content: [
    { type: "thinking", thinking: text(20) },
    { type: "text", text: t },
    { type: "toolCall", id: `call_${Math.floor(rand() * 1e6)}`, name: "read", arguments: { path: "src/lib.rs" } },
  ],
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  usage,
  stopReason: "toolUse",
  timestamp: Date.now(),
});

// 1. Twenty sessions of a few turns each.
const made = [];
for (let s = 0; s < 20; s++) {
  const sm = SessionManager.create(cwd);
  sm.appendMessage({
    role: "system",
    content: "You are pi, a coding agent.",
    toolsAdded: [{ name: "read", description: "Read a file", parameters: { type: "object" } }],
    timestamp: 0,
  });
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  for (let turn = 0; turn < 5 + (s % 7); turn++) {
    sm.appendMessage({ role: "user", content: `Task ${s}.${turn}: ${text(12)}`, timestamp: Date.now() });
    sm.appendMessage(assistant(text(30)));
    sm.appendMessage({
      role: "toolResult",
      toolCallId: "call_1",
      toolName: "read",
      content: [{ type: "text", text: text(200) }],
      isError: false,
      timestamp: Date.now(),
    });
  }
  if (s % 4 === 0) sm.appendSessionInfo(`Refactor ${words[s % words.length]} module`);
  made.push(sm);
}

// 2. Branch, label, compact and build context on one of them.
const sm = made[3];
const branch = sm.getBranch();
const firstUser = branch.find((e) => e.type === "message" && e.message.role === "user");
sm.appendLabelChange(firstUser.id, "checkpoint-1");
const before = sm.buildSessionContext().messages.length;
const keep = branch[branch.length - 3];
sm.appendCompaction("User refactored the module; tests pass.", keep.id, 12000, {
  readFiles: ["src/lib.rs"],
  modifiedFiles: [],
});
const after = sm.buildSessionContext();
sm.branchWithSummary(firstUser.id, "Tried approach A, abandoned.");
sm.appendMessage({ role: "user", content: "Try approach B instead", timestamp: Date.now() });
const forked = sm.createBranchedSession(sm.getLeafId());

// 3. Reopen and list.
const reopened = SessionManager.open(sm.getSessionFile());
const sessions = await SessionManager.list(cwd);
const ms = (performance.now() - t0).toFixed(0);

console.log(`pi-session-native demo in ${root}`);
console.log(`  sessions written:            ${sessions.length} in ${made[0].getSessionDir()}`);
console.log(`  context before compaction:   ${before} messages`);
console.log(
  `  context after compaction:    ${after.messages.length} messages (model ${after.model.provider}/${after.model.modelId})`,
);
console.log(`  label on first prompt:       ${reopened.getLabel(firstUser.id)}`);
console.log(`  branched session file:       ${forked.split("/").pop()} (${statSync(forked).size} bytes)`);
console.log(`  reopened entries / tree roots: ${reopened.getEntryCount()} / ${reopened.getTree().length}`);
console.log("  newest sessions (SessionManager.list):");
for (const s of sessions.slice(0, 5)) {
  console.log(
    `    ${s.id.slice(0, 13)}…  ${String(s.messageCount).padStart(3)} msgs  ${(s.name ?? s.firstMessage).slice(0, 50)}`,
  );
}
console.log(`  first line of a file:        ${readFileSync(sessions[0].path, "utf8").split("\n")[0].slice(0, 100)}…`);
console.log(`done in ${ms} ms`);

// 4. The pi-sessions CLI on a realistic generated agent dir (20 sessions with compactions,
//    branches, tool results and images), built from the same Rust core.
const agentDir = join(root, "generated-agent");
const demo = generateDemo(agentDir);
const columns = String(process.stdout.columns || 100);
const cli = (...args) => {
  console.log(`\n$ pi-sessions ${args.join(" ")}`);
  const r = spawnSync(bin, ["--agent-dir", agentDir, "--color", "never", ...args], {
    encoding: "utf8",
    env: { ...process.env, COLUMNS: columns },
  });
  // 1 is "nothing found" (a search without a match): shown, not a failure.
  if (r.error || (r.status !== 0 && r.status !== 1))
    fail(`pi-sessions ${args.join(" ")} failed (exit ${r.status}): ${r.stderr || r.error}`);
  process.stdout.write(r.stdout.split("\n").slice(0, 14).join("\n") + "\n");
};
cli("ls", "--cwd", demo.cwd, "--limit", "6");
const first = (await SessionManager.list(demo.cwd, demo.sessionDir))[0];
cli("tree", first.path);
cli("search", "error", "--all", "--limit", "5");
cli("stats", "--all");
console.log(`\nthe demo's files are kept in ${root}`);
console.log(`  try: ${bin} --agent-dir ${agentDir} ls --all`);
console.log(`  remove them with: rm -rf ${root}`);
