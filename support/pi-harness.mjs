// Shared pieces of the pi CLI tests and bench: a temp "side" (agent dir with models.json pointing at the
// mock model, a project dir, a home), the mock model child, and how to run stock pi or pi-native.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { nodeBinary, REPO } from "../scripts/node-bin.mjs";
import { installPi } from "../scripts/pi-cache.mjs";
import { DEV_PI_DIR, devPiVariant } from "../scripts/pi-variants.mjs";
import { Normalizer } from "./normalize.mjs";

export { REPO };
/**
 * The pi under test: node_modules' pi, or PI_TEST_PI=<version | pi package dir> (installed into
 * .cache/pi/ by scripts/pi-cache.mjs; verify:pi runs the pi CLI tests this way).
 */
export const PI_DIR = process.env.PI_TEST_PI ? installPi(process.env.PI_TEST_PI) : DEV_PI_DIR;
export const PI_VERSION = JSON.parse(readFileSync(join(PI_DIR, "package.json"), "utf8")).version;
export const STOCK_CLI = join(PI_DIR, "dist/bundle/cli.js");
export const NATIVE_BIN = join(REPO, "pi/launcher.js");
export const MODEL = { provider: "mock", id: "mock-model" };

export const node22 = () => nodeBinary(22, { minMinor: 19 });

/** Start the mock model in a child process; resolves to { port, logDir, stop() }. */
export function startMockModel(logDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, "support/mock-model.mjs"), ...(logDir ? [logDir] : [])], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    let out = "";
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`mock model exited (${code}) before listening`)));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      const { port } = JSON.parse(out.slice(0, nl));
      child.removeAllListeners("exit");
      resolve({
        port,
        logDir,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.on("exit", () => done());
            child.stdin.end();
          }),
      });
    });
  });
}

/**
 * A temp root for one implementation: <root>/agent (PI_CODING_AGENT_DIR), <root>/proj (cwd), <root>/home.
 * `label` must have the same length on both sides compared (paths appear in prompts and token counts).
 */
export function makeSide(label, port, { settings = {}, contextWindow = 128000 } = {}) {
  const root = mkdtempSync(join(tmpdir(), `pi-t-${label}-`));
  const agent = join(root, "agent");
  const proj = join(root, "proj");
  const home = join(root, "home");
  for (const d of [agent, proj, home]) mkdirSync(d, { recursive: true });
  writeFileSync(
    join(agent, "models.json"),
    JSON.stringify({
      providers: {
        [MODEL.provider]: {
          baseUrl: `http://127.0.0.1:${port}/${label}/v1`,
          api: "openai-completions",
          apiKey: "mock-key",
          models: [
            {
              id: MODEL.id,
              name: "Mock Model",
              contextWindow,
              maxTokens: 4096,
              cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
            },
          ],
        },
      },
    }),
  );
  writeFileSync(
    join(agent, "settings.json"),
    JSON.stringify({ defaultProvider: MODEL.provider, defaultModel: MODEL.id, quietStartup: true, ...settings }),
  );
  writeFileSync(join(proj, "notes.txt"), "line one of notes.txt\nline two\n");
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    PI_CODING_AGENT_DIR: agent,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    TZ: "UTC",
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
  };
  // pi-native finds pi from the project dir up, then beside this package: point it at the pi under test
  if (PI_DIR !== DEV_PI_DIR) env.PI_SESSION_NATIVE_PI_DIR = PI_DIR;
  // verify:pi's table with the candidate release's row (pi/gate.js)
  if (process.env.PI_SESSION_NATIVE_TABLE) env.PI_SESSION_NATIVE_TABLE = process.env.PI_SESSION_NATIVE_TABLE;
  if (process.env.NODE_COMPILE_CACHE) env.NODE_COMPILE_CACHE = process.env.NODE_COMPILE_CACHE;
  return { label, root, agent, proj, home, env, sessions: join(agent, "sessions") };
}

/** The command line of one implementation: stock pi (its bundle) or pi-native, both on Node 22. */
export function piCommand(impl, args) {
  if (impl === "stock") return [node22(), [STOCK_CLI, ...args]];
  if (impl === "native") return [node22(), [NATIVE_BIN, ...args]];
  throw new Error(`unknown impl ${impl}`);
}

/**
 * Run pi to completion. stdin is closed (print mode waits for stdin to end) unless `input` is given.
 * Resolves to { code, signal, stdout, stderr, ms }.
 */
export function runPi(impl, side, args, { input, env = {}, cwd = side.proj, timeout = 120_000 } = {}) {
  const [cmd, argv] = piCommand(impl, args);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, argv, {
      cwd,
      env: { ...side.env, ...env },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeout);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
    if (input !== undefined) child.stdin.end(input);
  });
}

/** Every file under dir, sorted by path: [{ rel, text (latin1) }]. */
export function snapshotDir(dir) {
  const out = [];
  const walk = (d) => {
    let names;
    try {
      names = readdirSync(d).sort();
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ rel: relative(dir, p), text: readFileSync(p, "latin1") });
    }
  };
  walk(dir);
  return out;
}

/** All session files of a side, oldest first (file names start with their creation time). */
export function sessionFiles(side) {
  return snapshotDir(side.sessions)
    .filter((f) => f.rel.endsWith(".jsonl"))
    .sort((a, b) => a.rel.split("/").pop().localeCompare(b.rel.split("/").pop()));
}

/**
 * A synthetic next release of node_modules' pi (scripts/pi-variants.mjs): `kind` "rebundled" (the
 * session module untouched, re-bundled), "class" or "listing" (a one-line change in the class or in
 * buildSessionInfo), labelled `version`, placed so its dependencies resolve from the repo's node_modules.
 */
export const fakePiVersion = (version, kind = "rebundled") => devPiVariant(`pi-${version}-${kind}`, kind, version);

/** tmux for the TUI tests: present, or installed with apt-get when we are root on Debian/Ubuntu. Returns whether it is there. */
export function ensureTmux(log = console.log) {
  const has = () => spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0;
  if (has()) return true;
  if (process.getuid?.() === 0 && spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0) {
    log("  installing tmux (apt-get install -y tmux)…");
    spawnSync("apt-get", ["update", "-qq"], { stdio: "ignore" });
    spawnSync("apt-get", ["install", "-y", "-qq", "tmux"], {
      stdio: "ignore",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  }
  return has();
}

/** pi in a detached tmux session of a fixed size; screen(), keys(), waitFor(), closed(). */
export function tmuxPi(impl, side, args, { name, width = 120, height = 40, env = {}, bin } = {}) {
  // `bin`: another pi bin file run as stock pi is (a synthetic next release)
  const [cmd, argv] = bin ? [node22(), [bin, ...args]] : piCommand(impl, args);
  const vars = { ...side.env, TERM: "xterm-256color", ...env };
  delete vars.NO_COLOR;
  const q = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
  const shell = `cd ${q(side.proj)} && exec env -i ${Object.entries(vars)
    .map(([k, v]) => `${k}=${q(v)}`)
    .join(" ")} ${q(cmd)} ${argv.map(q).join(" ")}`;
  execFileSync("tmux", ["new-session", "-d", "-s", name, "-x", String(width), "-y", String(height), shell]);
  const screen = () => spawnSync("tmux", ["capture-pane", "-p", "-t", name], { encoding: "utf8" }).stdout ?? "";
  const alive = () => spawnSync("tmux", ["has-session", "-t", name], { stdio: "ignore" }).status === 0;
  return {
    screen,
    alive,
    keys: (...k) => execFileSync("tmux", ["send-keys", "-t", name, ...k]),
    /** literal text (no key names) */
    type: (text) => execFileSync("tmux", ["send-keys", "-t", name, "-l", text]),
    async waitFor(test, what, ms = 30_000) {
      const t0 = Date.now();
      for (;;) {
        const s = screen();
        if (typeof test === "function" ? test(s) : test.test(s)) return s;
        if (Date.now() - t0 > ms) throw new Error(`${impl}: timed out waiting for ${what}; the screen:\n${s}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async closed(ms = 20_000) {
      const t0 = Date.now();
      while (alive()) {
        if (Date.now() - t0 > ms) {
          spawnSync("tmux", ["kill-session", "-t", name]);
          return false;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      return true;
    },
    kill: () => spawnSync("tmux", ["kill-session", "-t", name], { stdio: "ignore" }),
  };
}

/** ok/fail lines and their count, for the pi CLI test scripts; `finish(t0)` prints the closing line and exits. */
export function checker(names = ["stock", "native"]) {
  const failures = [];
  let checks = 0;
  const ok = (what) => {
    checks++;
    console.log(`  ok   ${what}`);
  };
  const fail = (what, detail = "") => {
    checks++;
    failures.push(what);
    console.log(`  FAIL ${what}${detail ? `\n${detail}` : ""}`);
  };
  /** First differing line of two texts, for the failure message. */
  const firstDiff = (a, b) => {
    const la = a.split("\n");
    const lb = b.split("\n");
    for (let i = 0; i < Math.max(la.length, lb.length); i++) {
      if (la[i] !== lb[i]) {
        const cut = (s) => (s === undefined ? "<none>" : s.length > 600 ? `${s.slice(0, 600)}…` : s);
        let col = 0;
        while (la[i] && lb[i] && la[i][col] === lb[i][col]) col++;
        const [x, y] = names.map((n) => `${n}:`.padEnd(Math.max(...names.map((m) => m.length)) + 2));
        return `    line ${i + 1}, col ${col} (of ${la.length} / ${lb.length} lines)\n    ${x}${cut(la[i]?.slice(Math.max(0, col - 200)))}\n    ${y}${cut(lb[i]?.slice(Math.max(0, col - 200)))}`;
      }
    }
    return "";
  };
  return {
    ok,
    fail,
    firstDiff,
    check: (cond, what, detail) => (cond ? ok(what) : fail(what, detail && `    ${detail}`)),
    same: (what, a, b) => (a === b ? ok(what) : fail(what, firstDiff(a, b))),
    finish(t0) {
      const took = `${((performance.now() - t0) / 1000).toFixed(1)} s`;
      console.log(
        failures.length
          ? `\n${failures.length} of ${checks} checks FAILED (${took})`
          : `\nall ${checks} checks passed in ${took}`,
      );
      process.exit(failures.length ? 1 : 0);
    },
  };
}

/**
 * `normText(i, text)` for the sides compared: each side's temp root, the root as pi encodes it into a session folder
 * name (--tmp-pi-t-stock-XXXXXX-proj--) and the mock model's path for it become placeholders; tool durations, the
 * only other clock in pi's output, become 0.
 */
export function sideNormalizer(sides) {
  const norms = sides.map((s) =>
    new Normalizer()
      .addRoot(s.root, "<ROOT>")
      .addRoot(s.root.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-"), "<EROOT>")
      .addRoot(`/${s.label}/v1`, "/<LABEL>/v1"),
  );
  return (i, text) => norms[i].text(text.replace(/"durationMs":\d+/g, '"durationMs":0'));
}

/**
 * A TUI screen for comparison: ages in the picker ("9 22m") depend on when each side ran, and pi's notices about
 * tools it could not download (fd, ripgrep) arrive at their own time.
 */
export const screenText = (normText, i, text) =>
  normText(i, text)
    .replace(/\b\d+(?:s|m|h|d|mo|y)\b/g, "<AGE>")
    .replace(/^ *Warning: .* not found\. Offline mode enabled, skipping download\.\n/gm, "")
    .replace(/[ \t]+$/gm, "");

/** The screen once it has matched `test` and then not changed for 1 s (two looks 500 ms apart). */
export async function settledScreen(t, test, what, ms = 30_000) {
  let last = await t.waitFor(test, what, ms);
  let unchanged = 0;
  for (let i = 0; i < 60 && unchanged < 2; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const now = t.screen();
    unchanged = now === last ? unchanged + 1 : 0;
    last = now;
  }
  return last;
}
