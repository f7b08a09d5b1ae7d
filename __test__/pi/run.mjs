// pi's own CLI, stock (its bundle) against pi-native (the same bundle, the statics of its SessionManager ours), on the
// same scripts against a loopback mock model (mock-model.mjs, a child process on 127.0.0.1).
//
//   npm run test:pi            (any Node >= 20; pi runs on Node 22, fetched into .cache/ if needed)
//
// Each side has its own temp root (same path length), agent dir (models.json, settings.json) and project.
// Steps run on both sides at once; after each step the exit code, stdout, stderr, every session file and
// every request pi sent the model are compared after normalising ids, uuids, timestamps, tool durations
// and the temp root. Then: --mode rpc with a scripted client, and the bad setups of pi-native (old Node,
// no pi installed, another pi version), which must print one line and touch no session file.
//
// PI_TEST_KEEP=1 keeps the temp roots. PI_TEST_SELF=1 runs stock pi on both sides (checks the normalisation).
// PI_TEST_ONLY=print|rpc|tui|setup runs one part.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  checker,
  ensureTmux,
  fakePiVersion,
  makeSide,
  NATIVE_BIN,
  PI_DIR,
  PI_VERSION,
  piCommand,
  node22,
  REPO,
  runPi,
  screenText,
  sessionFiles,
  settledScreen,
  sideNormalizer,
  snapshotDir,
  startMockModel,
  tmuxPi,
} from "../../support/pi-harness.mjs";

const T0 = performance.now();
const N22 = node22();
const ONLY = process.env.PI_TEST_ONLY;
const SIDES = ["stock", process.env.PI_TEST_SELF === "1" ? "stock" : "native"];
const LABELS = ["stock", "nativ"]; // same length: paths end up in prompts and token counts

const { ok, fail, same, firstDiff, finish } = checker(["stock", "native"]);

console.log(`pi CLI tests: ${N22} (${execFileSync(N22, ["--version"]).toString().trim()}), stock pi vs pi-native`);
const logRoot = mkdtempSync(join(tmpdir(), "pi-t-log-"));
const model = await startMockModel(logRoot);
// a small keepRecentTokens, so that the RPC `compact` has something to summarise
const sides = LABELS.map((label) =>
  makeSide(label, model.port, { settings: { compaction: { keepRecentTokens: 20 } } }),
);
// the root, and the root as pi encodes a cwd into a session folder name (--tmp-pi-t-stock-XXXXXX-proj--)
// pi-native runs pi's own bundle after swapping every static of pi's SessionManager class (pi/swap.js):
// the log names the swap and the static pi's startup called
{
  const warm = makeSide("wrmup", model.port);
  const log = join(warm.root, "swap.jsonl");
  const r = await runPi("native", warm, ["--no-session", "-p", "warm up"], { env: { PI_SESSION_NATIVE_LOG: log } });
  const records = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).map(JSON.parse) : [];
  const events = records.map((x) => (x.event === "call" ? `call ${x.name}` : `${x.event} ${x.by} ${x.mode}`));
  if (
    r.code === 0 &&
    r.stdout.startsWith("reply #1") &&
    r.stderr === "" &&
    events.join() === "swap pi-native all,call inMemory"
  )
    ok("pi-native: one swap of every static before pi's main, and pi's startup calls ours (inMemory)");
  else
    fail(
      "pi-native's swap",
      `    code ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)}, log ${JSON.stringify(events)}`,
    );
  rmSync(warm.root, { recursive: true, force: true });
}
const normText = sideNormalizer(sides);

// ---------------------------------------------------------------------------
// Normalisation and comparison

/** Compare everything pi left behind on both sides: session files and model requests (new ones since last call). */
const seenRequests = [0, 0];
function compareState(step) {
  const files = sides.map((s, i) =>
    sessionFiles(s).map((f) => ({ rel: normText(i, f.rel), text: normText(i, f.text) })),
  );
  same(`${step}: session file names`, files[0].map((f) => f.rel).join("\n"), files[1].map((f) => f.rel).join("\n"));
  const n = Math.min(files[0].length, files[1].length);
  let allSame = true;
  for (let k = 0; k < n; k++) {
    if (files[0][k].text !== files[1][k].text) {
      allSame = false;
      fail(`${step}: session file ${files[0][k].rel}`, firstDiff(files[0][k].text, files[1][k].text));
    }
  }
  if (allSame) ok(`${step}: ${n} session files identical`);
  const reqs = sides.map((s, i) => {
    const p = join(logRoot, `${s.label}.jsonl`);
    const lines = existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean) : [];
    const fresh = lines.slice(seenRequests[i]);
    seenRequests[i] = lines.length;
    return fresh.map((l) => normText(i, l));
  });
  same(`${step}: ${reqs[0].length} model requests`, reqs[0].join("\n"), reqs[1].join("\n"));
}

function compareRun(step, results) {
  const [a, b] = results;
  same(`${step}: exit code`, String(a.code ?? a.signal), String(b.code ?? b.signal));
  same(`${step}: stdout`, normText(0, a.stdout), normText(1, b.stdout));
  same(`${step}: stderr`, normText(0, a.stderr), normText(1, b.stderr));
  if (a.code !== 0) console.log(`       (stock exited ${a.code}: ${a.stderr.trim().split("\n")[0]})`);
}

/** Run one CLI step on both sides at once; args may depend on the side's state. */
async function step(name, args, opts = {}) {
  const results = await Promise.all(
    SIDES.map((impl, i) => runPi(impl, sides[i], typeof args === "function" ? args(sides[i], i) : args, opts)),
  );
  compareRun(name, results);
  compareState(name);
  return results;
}

const sessionIdOf = (file) => JSON.parse(file.text.split("\n")[0]).id;
const sessionFileAt = (side, k) => join(side.sessions, sessionFiles(side)[k].rel);

// ---------------------------------------------------------------------------
// 1. Print mode and JSON mode

if (!ONLY || ONLY === "print") {
  console.log("print mode");
  await step("-p with a tool call", ["-p", "hello, please TOOL:notes.txt"]);
  await step("-c -p", ["-c", "-p", "and now a plain question"]);
  await step("--name -p (new session)", ["--name", "named session", "-p", "a named start"]);
  await step("--session <id prefix> -p", (s) => [
    "--session",
    sessionIdOf(sessionFiles(s)[0]).slice(0, 8),
    "-p",
    "back in the first session",
  ]);
  await step("--fork <id prefix> -p", (s) => [
    "--fork",
    sessionIdOf(sessionFiles(s)[0]).slice(0, 8),
    "-p",
    "in the fork",
  ]);
  await step("--session <file> --name -p", (s) => [
    "--session",
    sessionFileAt(s, 1),
    "--name",
    "renamed",
    "-p",
    "renamed it",
  ]);
  await step("--no-session -p", ["--no-session", "-p", "nothing saved TOOL:notes.txt"]);
  await step("--mode json -c", ["--mode", "json", "-c", "json mode turn TOOL:notes.txt"]);
  await step("--mode json --no-session", ["--mode", "json", "--no-session", "json without a session"]);
  await step("--session <unknown id> -p", ["--session", "ffffffffdead", "-p", "no such session"]);
}

// ---------------------------------------------------------------------------
// 2. RPC mode: a scripted client, one command at a time; a prompt waits for agent_settled.

class Rpc {
  constructor(impl, side, args, env = {}) {
    const [cmd, argv] = piCommand(impl, ["--mode", "rpc", ...args]);
    this.child = spawn(cmd, argv, { cwd: side.proj, env: { ...side.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    this.records = [];
    this.stderr = "";
    this.waiters = [];
    let buf = "";
    this.child.stdout.setEncoding("utf8").on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        this.records.push(line);
        const rec = JSON.parse(line);
        const waiting = [];
        for (const w of this.waiters) {
          if (w.test(rec)) w.resolve(rec);
          else waiting.push(w);
        }
        this.waiters = waiting;
      }
    });
    this.child.stderr.setEncoding("utf8").on("data", (d) => (this.stderr += d));
    this.closed = new Promise((r) => this.child.on("close", (code, signal) => r({ code, signal })));
    this.n = 0;
  }
  wait(test, what, ms = 60_000) {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`rpc: timed out waiting for ${what}`)), ms);
      this.waiters.push({
        test,
        resolve: (r) => {
          clearTimeout(t);
          resolve(r);
        },
      });
    });
  }
  async send(cmd) {
    const id = `req-${++this.n}`;
    const settled =
      cmd.type === "prompt" || cmd.type === "compact"
        ? this.wait(
            (r) => r.type === "agent_settled" || (r.type === "response" && r.id === id && !r.success),
            "agent_settled",
          )
        : null;
    const response = this.wait((r) => r.type === "response" && r.id === id, `response ${id}`);
    this.child.stdin.write(`${JSON.stringify({ id, ...cmd })}\n`);
    const r = await response;
    if (settled && cmd.type === "prompt" && r.success) await settled;
    return r;
  }
  async close() {
    this.child.stdin.end();
    return this.closed;
  }
}

if (!ONLY || ONLY === "rpc") {
  console.log("rpc mode");
  const clients = SIDES.map((impl, i) => new Rpc(impl, sides[i], ["-c"]));
  const answers = [[], []];
  /** Send the same command (or a per-side one) to both, compare the responses. */
  const both = async (name, cmd) => {
    const rs = await Promise.all(clients.map((c, i) => c.send(typeof cmd === "function" ? cmd(i) : cmd)));
    for (let i = 0; i < rs.length; i++) answers[i].push(rs[i]);
    same(`rpc ${name}: response`, normText(0, JSON.stringify(rs[0])), normText(1, JSON.stringify(rs[1])));
    return rs;
  };
  await both("get_state", { type: "get_state" });
  await both("prompt (tool call)", { type: "prompt", message: "rpc turn TOOL:notes.txt" });
  await both("set_session_name", { type: "set_session_name", name: "rpc named" });
  const st = await both("get_state (named)", { type: "get_state" });
  const firstFile = st.map((r) => r.data.sessionFile);
  const forks = await both("get_fork_messages", { type: "get_fork_messages" });
  await both("get_entries", { type: "get_entries" });
  await both("get_entries since", (i) => ({ type: "get_entries", since: forks[i].data.messages[0].entryId }));
  await both("get_tree", { type: "get_tree" });
  await both("get_last_assistant_text", { type: "get_last_assistant_text" });
  await both("fork", (i) => ({ type: "fork", entryId: forks[i].data.messages.at(-1).entryId }));
  await both("get_state (fork)", { type: "get_state" });
  await both("prompt (in the fork)", { type: "prompt", message: "rpc turn in the fork" });
  await both("clone", { type: "clone" });
  await both("get_state (clone)", { type: "get_state" });
  await both("new_session", { type: "new_session" });
  await both("prompt (new session)", { type: "prompt", message: "first words of a new session" });
  await both("get_session_stats", { type: "get_session_stats" });
  await both("switch_session", (i) => ({ type: "switch_session", sessionPath: firstFile[i] }));
  await both("get_state (switched)", { type: "get_state" });
  await both("get_tree (switched)", { type: "get_tree" });
  await both("compact", { type: "compact", customInstructions: "keep it short" });
  await both("get_entries (compacted)", { type: "get_entries" });
  await both("prompt (after compaction)", { type: "prompt", message: "after the compaction" });
  await both("get_messages", { type: "get_messages" });
  await both("export_html", (i) => ({ type: "export_html", outputPath: join(sides[i].root, "export.html") }));
  if (process.env.PI_TEST_KEEP === "1") {
    for (let i = 0; i < sides.length; i++)
      writeFileSync(join(sides[i].root, "rpc-stdout.jsonl"), `${clients[i].records.join("\n")}\n`);
  }
  const closed = await Promise.all(clients.map((c) => c.close()));
  same("rpc: exit", JSON.stringify(closed[0]), JSON.stringify(closed[1]));
  same(
    "rpc: whole stdout (responses and events)",
    normText(0, clients[0].records.join("\n")),
    normText(1, clients[1].records.join("\n")),
  );
  same("rpc: stderr", normText(0, clients[0].stderr), normText(1, clients[1].stderr));
  compareState("rpc");
  // the session is embedded base64-encoded: decode it so its ids and times can be normalised
  const html = sides.map((s, i) =>
    normText(
      i,
      readFileSync(join(s.root, "export.html"), "latin1").replace(
        /(<script id="session-data" type="application\/json">)([A-Za-z0-9+/=]+)/,
        (_, tag, b64) => `${tag}${Buffer.from(b64, "base64").toString("latin1")}`,
      ),
    ),
  );
  same(`rpc export_html: the HTML file (${html[0].length} bytes)`, html[0], html[1]);
}

// ---------------------------------------------------------------------------
// 3. The interactive TUI under tmux: the /resume picker selects a session, /name, /tree (navigate to an
//    earlier point, no summary), a prompt on the new branch, then ctrl+d. Both sides at once; the screens
//    of each stage and the session files are compared.

if (!ONLY || ONLY === "tui") {
  if (!ensureTmux()) {
    console.log("tui: SKIPPED (no tmux, and it could not be installed)");
  } else {
    console.log("tui (tmux)");
    if (sessionFiles(sides[0]).length === 0)
      await step("a session for the picker", ["-p", "hello, please TOOL:notes.txt"]);
    // ages in the picker ("9 22m") and the footer's token counts depend on when each side ran
    // pi's notices about tools it could not download (fd, ripgrep) arrive at their own time: left out
    const screenNorm = (i, text) => screenText(normText, i, text);
    const settled = settledScreen;
    const tuis = SIDES.map((impl, i) => tmuxPi(impl, sides[i], ["-r"], { name: `pi-test-${process.pid}-${i}` }));
    const stage = async (what, test, act) => {
      const screens = await Promise.all(tuis.map((t) => settled(t, test, what)));
      const norm = screens.map((x, i) => screenNorm(i, x));
      same(`tui ${what}: screen`, norm[0], norm[1]);
      if (norm[0] !== norm[1] && process.env.PI_TEST_KEEP === "1")
        console.log(`--- stock\n${screens[0]}\n--- native\n${screens[1]}\n---`);
      if (act) for (const t of tuis) act(t);
    };
    try {
      await stage("/resume picker loaded", /◉ Current Folder/, (t) => t.keys("Enter"));
      await stage(
        "session resumed",
        (s) => !/Resume Session/.test(s) && /mock-model/.test(s),
        (t) => {
          t.type("/name tui named");
          t.keys("Enter");
        },
      );
      await stage("/name", /Session name set: tui named/, (t) => {
        t.type("/tree");
        t.keys("Enter");
      });
      await stage("/tree", /Session Tree[\s\S]*\(\d+\/\d+\)/, (t) => t.keys("Up", "Up", "Enter"));
      await stage("/tree: summarize branch?", /Summarize branch\?/, (t) => t.keys("Enter"));
      await stage("/tree: navigated", /Navigated to selected point/, (t) => {
        t.keys("C-u");
        t.type("a prompt on the new branch");
        t.keys("Enter");
      });
      await stage("prompt on the new branch", /<- a prompt on the new branch/, (t) => t.keys("C-d"));
      const closed = await Promise.all(tuis.map((t) => t.closed()));
      same("tui: ctrl+d exits", String(closed[0]), String(closed[1]));
    } catch (e) {
      fail("tui", `    ${e.message}`);
    } finally {
      for (const t of tuis) t.kill();
    }
    compareState("tui");
  }
}

// ---------------------------------------------------------------------------
// 4. Bad setups: one line on stderr, exit 2, no session file touched.

if (!ONLY || ONLY === "setup") {
  console.log("exports");
  // our module exports what pi's session-manager.js exports, and every name pi's modules import from it
  const ours = Object.keys(await import(pathToFileURL(join(REPO, "index.mjs")).href))
    .filter((k) => k !== "default")
    .sort();
  const piSm = join(PI_DIR, "dist/core/session-manager.js");
  const theirs = Object.keys(await import(pathToFileURL(piSm).href)).sort();
  same("the same export list as pi's dist/core/session-manager.js", theirs.join(" "), ours.join(" "));
  const wanted = new Map();
  const walk = (d) => {
    for (const n of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, n.name);
      if (n.isDirectory() && n.name !== "bundle") walk(p);
      else if (n.name.endsWith(".js")) {
        const text = readFileSync(p, "utf8");
        for (const m of text.matchAll(/(?:import|export)\s*\{([^}]*)\}\s*from\s*"([^"]*session-manager\.js)"/g)) {
          if (resolve(dirname(p), m[2]) !== piSm) continue;
          for (const spec of m[1]
            .split(",")
            .map((x) => x.trim())
            .filter(Boolean)) {
            if (spec.startsWith("type ")) continue;
            const name = spec.split(/\s+as\s+/)[0];
            wanted.set(name, [...(wanted.get(name) ?? []), relative(PI_DIR, p)]);
          }
        }
      }
    }
  };
  walk(join(PI_DIR, "dist"));
  const missing = [...wanted.keys()].filter((k) => !ours.includes(k));
  if (wanted.size > 0 && missing.length === 0)
    ok(`the ${wanted.size} names pi's modules import from it are all exported`);
  else
    fail(
      "names pi's modules import",
      `    missing: ${missing.map((k) => `${k} (${wanted.get(k).join(", ")})`).join("; ") || "(none found: the scan is broken)"}`,
    );

  console.log("pi-native bad setups");
  const side = makeSide("setup", model.port);
  const before = JSON.stringify(snapshotDir(side.agent));
  const expectOneLine = (what, r, pattern) => {
    const lines = r.stderr.split("\n").filter(Boolean);
    if (r.code === 2 && lines.length === 1 && pattern.test(lines[0]) && r.stdout === "")
      ok(`${what}: exit 2, "${lines[0]}"`);
    else
      fail(
        `${what}: expected exit 2 and one line matching ${pattern}`,
        `    code ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)}`,
      );
  };
  const run = (cmd, args, env = {}) =>
    new Promise((resolve) => {
      const child = spawn(cmd, args, {
        cwd: side.proj,
        env: { ...side.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  // an old Node: this very process when it is older than 22.19, else Node 20 from the registry cache
  const { nodeBinary } = await import("../../scripts/node-bin.mjs");
  const oldNode = nodeBinary(20);
  expectOneLine(
    "Node 20",
    await run(oldNode, [NATIVE_BIN, "-p", "hi"]),
    /^pi-native: pi needs Node >= 22\.19, this is Node 20\./,
  );
  // no pi: the bin and what it reads before it finds pi (pi/env.js), alone in a temp dir, an empty
  // global prefix, a project without node_modules
  const lone = mkdtempSync(join(tmpdir(), "pi-t-lone-"));
  mkdirSync(join(lone, "pi"));
  writeFileSync(join(lone, "pi", "pi-native.js"), readFileSync(NATIVE_BIN));
  writeFileSync(join(lone, "pi", "env.js"), readFileSync(join(REPO, "pi", "env.js")));
  const prefix = mkdtempSync(join(tmpdir(), "pi-t-prefix-"));
  expectOneLine(
    "no pi installed",
    await run(N22, [join(lone, "pi", "pi-native.js"), "-p", "hi"], {
      npm_config_prefix: prefix,
      PREFIX: prefix,
      PI_SESSION_NATIVE_PI_DIR: "", // the pi under test, when PI_TEST_PI named one
    }),
    /^pi-native: no pi installed/,
  );
  if (JSON.stringify(snapshotDir(side.agent)) === before) ok("bad setups touched no file in the agent dir");
  else fail("bad setups touched the agent dir");
  // the next pi releases (scripts/pi-variants.mjs): the gate looks at the session module, not the version
  const oneLine = (r) => r.stderr.split("\n").filter(Boolean);
  const logged = (file) =>
    existsSync(file)
      ? readFileSync(file, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  const trace = join(side.root, "trace.json");
  const rebundled = fakePiVersion("1.7.0", "rebundled");
  const log = join(side.root, "decisions.jsonl");
  const rb = await run(N22, [NATIVE_BIN, "--no-session", "-p", "hi"], {
    PI_SESSION_NATIVE_PI_DIR: rebundled,
    PI_SESSION_NATIVE_LOG: log,
  });
  const rbSwap = logged(log).find((e) => e.event === "swap");
  if (
    rb.code === 0 &&
    rb.stderr === "" &&
    /reply #1/.test(rb.stdout) &&
    rbSwap?.by === "pi-native" &&
    rbSwap.profile === "1.6"
  )
    ok("pi 1.7.0, 1.6.0 re-bundled: pi-native swaps every static, profile 1.6");
  else
    fail(
      "pi 1.7.0 re-bundled",
      `    code ${rb.code}, stdout ${JSON.stringify(rb.stdout)}, stderr ${JSON.stringify(rb.stderr)}, log ${JSON.stringify(logged(log))}`,
    );
  // a one-line change in the class: one line, then pi runs on its own SessionManager (ours never loads)
  const changed = fakePiVersion("1.7.0", "class");
  rmSync(log, { force: true });
  const r = await run(N22, [NATIVE_BIN, "--no-session", "-p", "hi"], {
    PI_SESSION_NATIVE_PI_DIR: changed,
    PI_SESSION_NATIVE_LOG: log,
  });
  const lines = oneLine(r);
  if (
    r.code === 0 &&
    lines.length === 1 &&
    /^pi-native: pi 1\.7\.0's session module \(its bundle\) is not one this package was verified against \(verified: pi [^)]*\); update pi-session-native/.test(
      lines[0],
    ) &&
    /reply #1/.test(r.stdout) &&
    !logged(log).some((e) => e.event === "swap")
  ) {
    ok(`pi 1.7.0 with a changed class: runs on its own SessionManager, "${lines[0].slice(0, 90)}…"`);
  } else
    fail(
      "pi 1.7.0 with a changed class",
      `    code ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)}, log ${JSON.stringify(logged(log))}`,
    );
  // and pi 1.6.0 through the same path does load our module (the trace file proves it)
  const r2 = await run(N22, [NATIVE_BIN, "--no-session", "-p", "hi"], { PI_SESSION_NATIVE_TRACE: trace });
  if (
    r2.code === 0 &&
    r2.stderr === "" &&
    existsSync(trace) &&
    JSON.parse(readFileSync(trace, "utf8")).methods["SessionManager.inMemory"]
  )
    ok(`pi ${PI_VERSION} through the resolve hook: our SessionManager is the one pi calls`);
  else
    fail(
      `pi ${PI_VERSION} through the hook`,
      `    code ${r2.code}, stderr ${JSON.stringify(r2.stderr)}, trace written: ${existsSync(trace)}`,
    );
  // `node --import pi-session-native/register <pi>/dist/cli.js`, without the bin
  rmSync(trace, { force: true });
  const r3 = await run(
    N22,
    ["--import", join(REPO, "pi/register.mjs"), join(PI_DIR, "dist/cli.js"), "--no-session", "-p", "hi"],
    { PI_SESSION_NATIVE_TRACE: trace },
  );
  if (r3.code === 0 && r3.stderr === "" && /reply #1/.test(r3.stdout) && existsSync(trace))
    ok("node --import register.mjs dist/cli.js: pi on our SessionManager");
  else
    fail(
      "node --import register.mjs",
      `    code ${r3.code}, stderr ${JSON.stringify(r3.stderr)}, trace written: ${existsSync(trace)}`,
    );
  // the register entry: the re-bundled 1.7.0's unbundled module is 1.6.0's, so ours; a changed
  // buildSessionInfo (outside the class) leaves pi's module in place with one line
  rmSync(trace, { force: true });
  const r4 = await run(
    N22,
    ["--import", join(REPO, "pi/register.mjs"), join(rebundled, "dist/cli.js"), "--no-session", "-p", "hi"],
    { PI_SESSION_NATIVE_TRACE: trace },
  );
  if (r4.code === 0 && r4.stderr === "" && /reply #1/.test(r4.stdout) && existsSync(trace))
    ok("node --import register.mjs on pi 1.7.0 re-bundled: pi on our SessionManager");
  else
    fail(
      "node --import register.mjs on pi 1.7.0 re-bundled",
      `    code ${r4.code}, stderr ${JSON.stringify(r4.stderr)}, trace written: ${existsSync(trace)}`,
    );
  rmSync(trace, { force: true });
  const listing = fakePiVersion("1.7.0", "listing");
  const r5 = await run(
    N22,
    ["--import", join(REPO, "pi/register.mjs"), join(listing, "dist/cli.js"), "--no-session", "-p", "hi"],
    { PI_SESSION_NATIVE_TRACE: trace },
  );
  const l5 = oneLine(r5);
  if (
    r5.code === 0 &&
    l5.length === 1 &&
    /^pi-session-native: pi 1\.7\.0's session module \(dist\/core\/session-manager\.js\) is not one this package was verified against/.test(
      l5[0],
    ) &&
    /reply #1/.test(r5.stdout) &&
    !existsSync(trace)
  )
    ok("node --import register.mjs on pi 1.7.0 with a changed buildSessionInfo: pi's own module, one line");
  else
    fail(
      "node --import register.mjs on pi 1.7.0 with a changed buildSessionInfo",
      `    code ${r5.code}, stderr ${JSON.stringify(r5.stderr)}, trace written: ${existsSync(trace)}`,
    );
  // pi-native on stock pi releases whose bundle differs from 1.6.0's (pi/verified.json): every static
  // ours, in that release's profile (installed into .cache/pi/ by scripts/pi-cache.mjs)
  const { installPi } = await import("../../scripts/pi-cache.mjs");
  const profile = (await import("../../lib/profile.js")).default;
  for (const version of (process.env.PI_TEST_RELEASES ?? "1.0.3,1.5.2").split(",").filter(Boolean)) {
    const dir = installPi(version);
    rmSync(log, { force: true });
    const rv = await run(N22, [NATIVE_BIN, "--no-session", "-p", "hi"], {
      PI_SESSION_NATIVE_PI_DIR: dir,
      PI_SESSION_NATIVE_LOG: log,
    });
    const swapRec = logged(log).find((e) => e.event === "swap");
    const want = profile.forVersion(version);
    if (
      rv.code === 0 &&
      rv.stderr === "" &&
      /reply #1/.test(rv.stdout) &&
      swapRec?.mode === "all" &&
      swapRec.profile === want &&
      logged(log).some((e) => e.event === "call" && e.name === "inMemory")
    )
      ok(`stock pi ${version}: pi-native swaps every static, profile ${want}, pi calls ours`);
    else
      fail(
        `pi-native on stock pi ${version}`,
        `    code ${rv.code}, stdout ${JSON.stringify(rv.stdout.slice(0, 300))}, stderr ${JSON.stringify(rv.stderr.slice(0, 600))}, log ${JSON.stringify(logged(log))}`,
      );
  }
  for (const d of [lone, prefix, side.root])
    if (process.env.PI_TEST_KEEP !== "1") rmSync(d, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------

await model.stop();
if (process.env.PI_TEST_KEEP === "1") console.log(`kept: ${sides.map((s) => s.root).join(" ")} ${logRoot}`);
else for (const d of [...sides.map((s) => s.root), logRoot]) rmSync(d, { recursive: true, force: true });
finish(T0);
