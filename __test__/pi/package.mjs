// The pi package channel: stock pi 1.6.0 with this package installed as a pi package, against stock pi
// without it, on the same scripts (the mock model, the TUI under tmux), as run.mjs does for pi-native.
//
//   npm run test:pi-package      (any Node >= 20; pi runs on Node 22, fetched into .cache/ if needed)
//
// The package is the packed tarball (`npm pack`), installed the way users install it:
// `pi install npm:pi-session-native`, from a loopback npm registry (127.0.0.1) that serves that tarball.
// Which statics were swapped and which swapped statics pi called come from PI_SESSION_NATIVE_LOG.
// Checks:
//   - the in-session /resume rows (Current Folder, then All), and again after /new, equal stock pi's; pi
//     called our list/listAll; one swap per process although pi re-ran the extension's factory;
//   - PI_SESSION_NATIVE_SWAP=all: /resume into a session, a turn, /name, /tree, /fork and a turn give the
//     same session files as stock pi, through our open and forkFrom;
//   - PI_SESSION_NATIVE_SWAP=off (and the same in settings.json) swaps nothing;
//   - a pi version, or a session module, that was not verified gets no swap and one notice;
//   - a package without its binary: pi answers a print prompt (exit 0), and the TUI shows one notice;
//   - pi-native with the package installed: one swap (pi-native's), and one notice.
// PI_TEST_KEEP=1 keeps the temp roots.
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { encodeCwd, generateFolder } from "../../bench/gen.mjs";
import {
  checker,
  ensureTmux,
  fakePiVersion,
  makeSide,
  NATIVE_BIN,
  node22,
  PI_DIR,
  REPO,
  runPi,
  screenText,
  sessionFiles,
  settledScreen,
  sideNormalizer,
  STOCK_CLI,
  startMockModel,
  tmuxPi,
} from "./harness.mjs";

const T0 = performance.now();
const N22 = node22();
const KEEP = process.env.PI_TEST_KEEP === "1";
const { fail, check, same, finish } = checker(["stock", "package"]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

console.log(`pi package tests: ${N22} (${execFileSync(N22, ["--version"]).toString().trim()}), stock pi ± the package`);
if (!ensureTmux()) {
  console.log("SKIPPED: no tmux, and it could not be installed");
  process.exit(0);
}
const work = mkdtempSync(join(tmpdir(), "pi-t-pkg-"));

// ---------------------------------------------------------------------------
// The packed package, and a loopback registry that serves it

const packDir = join(work, "pack");
mkdirSync(packDir);
// --ignore-scripts: `prepare` would rebuild the addon; the built one is packed ("*.node" in `files`)
const tgzName = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", packDir], {
  cwd: REPO,
  encoding: "utf8",
})
  .trim()
  .split("\n")
  .pop();
const tgz = readFileSync(join(packDir, tgzName));
const pkgJson = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
const registry = await new Promise((resolve) => {
  const server = createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? "");
    const base = `http://127.0.0.1:${server.address().port}`;
    if (url === `/${pkgJson.name}`) {
      const version = {
        ...pkgJson,
        _id: `${pkgJson.name}@${pkgJson.version}`,
        dist: {
          tarball: `${base}/${pkgJson.name}/-/${tgzName}`,
          shasum: createHash("sha1").update(tgz).digest("hex"),
          integrity: `sha512-${createHash("sha512").update(tgz).digest("base64")}`,
        },
      };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          name: pkgJson.name,
          "dist-tags": { latest: pkgJson.version },
          versions: { [pkgJson.version]: version },
        }),
      );
    } else if (url === `/${pkgJson.name}/-/${tgzName}`) {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(tgz);
    } else {
      res.writeHead(404, { "content-type": "application/json" });
      res.end("{}");
    }
  });
  server.listen(0, "127.0.0.1", () => resolve(server));
});
const registryEnv = {
  npm_config_registry: `http://127.0.0.1:${registry.address().port}/`,
  npm_config_cache: join(work, "npm-cache"),
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};
// the same package unpacked, without its binary (a platform with no prebuilt package)
const noBinary = join(work, "no-binary");
execFileSync("tar", ["xzf", join(packDir, tgzName), "-C", work]);
cpSync(join(work, "package"), noBinary, { recursive: true });
for (const f of readdirSync(noBinary)) if (f.endsWith(".node")) rmSync(join(noBinary, f));

// ---------------------------------------------------------------------------
// Sides: stock pi, and stock pi with the package; the same generated sessions in both

const model = await startMockModel(join(work, "model-log"));
mkdirSync(join(work, "model-log"), { recursive: true });
const LABELS = ["stock", "pkgin"]; // same length: paths end up in the picker and in prompts
const sides = LABELS.map((label) => makeSide(label, model.port));
const [stock, pkg] = sides;
/** Stock pi with no package installed, for `-e <the package without its binary>`. */
const bare = makeSide("nobin", model.port);
/** Sessions for the picker: this project's and another project's, generated for stock, copied for pkg. */
{
  const other = (s) => join(s.root, "other");
  const specs = [
    { cwd: stock.proj, count: 120, seed: 7 },
    { cwd: other(stock), count: 40, seed: 8 },
  ];
  for (const { cwd, count, seed } of specs)
    generateFolder(join(stock.sessions, encodeCwd(cwd)), {
      seed,
      count,
      totalBytes: count * 6 * 1024,
      cwd,
      median: 6 * 1024,
      max: 64 * 1024,
    });
  const copy = (from, to) => {
    for (const name of readdirSync(from)) {
      const src = join(from, name);
      const dst = join(to, name.replaceAll(encodeCwd(stock.root).slice(2, -2), encodeCwd(pkg.root).slice(2, -2)));
      if (statSync(src).isDirectory()) {
        mkdirSync(dst, { recursive: true });
        copy(src, dst);
      } else
        writeFileSync(
          dst,
          readFileSync(src, "latin1")
            .replaceAll(stock.root, pkg.root)
            .replaceAll(encodeCwd(stock.root).slice(2, -2), encodeCwd(pkg.root).slice(2, -2)),
          "latin1",
        );
    }
  };
  mkdirSync(pkg.sessions, { recursive: true });
  copy(stock.sessions, pkg.sessions);
}
const normText = sideNormalizer(sides);
const screenNorm = (i, text) => screenText(normText, i, text);

/** The PI_SESSION_NATIVE_LOG records of a file (one JSON object a line), as short strings. */
function readLog(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .map((r) =>
      r.event === "call" ? `call ${r.name}` : r.event === "swap" ? `swap ${r.by} ${r.mode}` : `skip ${r.by}: ${r.why}`,
    );
}
const count = (xs, x) => xs.filter((y) => y === x).length;

// ---------------------------------------------------------------------------
// 1. pi install npm:pi-session-native

console.log("pi install npm:pi-session-native (a loopback registry serving the packed tarball)");
{
  const r = await runPi("stock", pkg, ["install", `npm:${pkgJson.name}`], { env: registryEnv });
  const installed = join(pkg.agent, "npm", "node_modules", pkgJson.name);
  const settings = JSON.parse(readFileSync(join(pkg.agent, "settings.json"), "utf8"));
  check(
    r.code === 0 &&
      existsSync(join(installed, "extension", "index.mjs")) &&
      settings.packages?.includes(`npm:${pkgJson.name}`),
    `exit 0, installed into ${relative(pkg.root, installed)}, listed in settings.json`,
    `code ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr.slice(0, 800))}, settings ${JSON.stringify(settings.packages)}`,
  );
  const list = await runPi("stock", pkg, ["list"]);
  check(list.code === 0 && list.stdout.includes(`npm:${pkgJson.name}`), "`pi list` shows it", list.stdout);
}

// ---------------------------------------------------------------------------
// 2. The TUI: both sides at once, the screens of each stage compared

const settled = (t, test, what) => settledScreen(t, test, what, 60_000);

/** Drive both sides through `stages` ([what, test, act?]); compare each stage's screens. Returns the pkg side's screens. */
async function tuiBoth(name, args, stages, env = [{}, {}]) {
  const tuis = sides.map((s, i) =>
    tmuxPi("stock", s, args, { name: `pi-pkg-${process.pid}-${name}-${i}`, env: env[i] }),
  );
  const seen = [];
  try {
    for (const [what, test, act] of stages) {
      const screens = await Promise.all(tuis.map((t) => settled(t, test, `${name}: ${what}`)));
      const norm = screens.map((x, i) => screenNorm(i, x));
      seen.push(screens[1]);
      same(`${name}, ${what}: screen`, norm[0], norm[1]);
      if (norm[0] !== norm[1] && KEEP) console.log(`--- stock\n${screens[0]}\n--- package\n${screens[1]}\n---`);
      if (act) for (const t of tuis) act(t);
    }
    const closed = await Promise.all(tuis.map((t) => t.closed()));
    check(closed.every(Boolean), `${name}: ctrl+d exits`);
  } catch (e) {
    fail(name, `    ${e.message}`);
  } finally {
    for (const t of tuis) t.kill();
  }
  return seen;
}
/** Type `text` into an emptied editor (pi puts a chosen message back into it after /tree and /fork), then Enter. */
const command = (text) => (t) => {
  t.keys("C-u");
  t.type(text);
  t.keys("Enter");
};
const READY = (s) => /mock-model/.test(s) && !/Resume Session/.test(s);
const LOADED_HERE = (s) => /◉ Current Folder/.test(s) && /\(\d+\/\d+\)/.test(s);
const LOADED_ALL = (s) => /◉ All/.test(s) && /\(\d+\/\d+\)/.test(s);

console.log("/resume rows (the package: list and listAll)");
{
  const logs = sides.map((s) => join(s.root, "resume.jsonl"));
  const screens = await tuiBoth(
    "resume",
    [],
    [
      ["started", READY, command("/resume")],
      ["/resume: Current Folder", LOADED_HERE, (t) => t.keys("Tab")],
      ["/resume: All", LOADED_ALL, (t) => t.keys("Escape")],
      ["back in the session", READY, command("/new")],
      ["/new", READY, command("/resume")],
      ["/resume after /new", LOADED_HERE, (t) => t.keys("Escape")],
      ["back again", READY, (t) => t.keys("C-d")],
    ],
    logs.map((f) => ({ PI_SESSION_NATIVE_LOG: f })),
  );
  const log = readLog(logs[1]);
  check(readLog(logs[0]).length === 0, "stock pi alone: nothing of ours runs");
  check(
    count(log, "swap extension lists") === 1 && !log.some((l) => l.startsWith("swap ") && l !== "swap extension lists"),
    "one swap (list and listAll, by the extension) although /new re-ran its factory",
    JSON.stringify(log),
  );
  check(
    count(log, "call list") >= 2 && count(log, "call listAll") >= 1,
    `pi's picker called our list ${count(log, "call list")}× and listAll ${count(log, "call listAll")}×`,
    JSON.stringify(log),
  );
  check(!screens.some((s) => /pi-session-native:/.test(s)), "no notice when the swap is made");
}

console.log("PI_SESSION_NATIVE_SWAP=all: resume, a turn, /name, /tree, /fork, a turn");
{
  const logs = sides.map((s) => join(s.root, "all.jsonl"));
  await tuiBoth(
    "all",
    [],
    [
      ["started", READY, command("/resume")],
      ["/resume", LOADED_HERE, (t) => t.keys("Enter")],
      ["resumed", READY, command("a turn after resuming TOOL:notes.txt")],
      ["a turn", /The tool said: line one of notes\.txt/, command("/name pkg named")],
      ["/name", /Session name set: pkg named/, command("/tree")],
      ["/tree", /Session Tree[\s\S]*\(\d+\/\d+\)/, (t) => t.keys("Up", "Up", "Enter")],
      ["/tree: summarize branch?", /Summarize branch\?/, (t) => t.keys("Enter")],
      ["/tree: navigated", /Navigated to selected point/, command("/fork")],
      ["/fork: the selector", /Fork from/i, (t) => t.keys("Enter")],
      ["/fork: forked", (s) => READY(s) && !/Fork from/i.test(s), command("a turn in the fork")],
      ["a turn in the fork", /<- a turn in the fork/, (t) => t.keys("C-d")],
    ],
    logs.map((f) => ({ PI_SESSION_NATIVE_LOG: f, PI_SESSION_NATIVE_SWAP: "all" })),
  );
  const files = sides.map((s, i) =>
    sessionFiles(s).map((f) => ({ rel: normText(i, f.rel), text: normText(i, f.text) })),
  );
  same("all: session file names", files[0].map((f) => f.rel).join("\n"), files[1].map((f) => f.rel).join("\n"));
  const differ = files[0].filter((f, k) => f.text !== files[1][k]?.text).map((f) => f.rel);
  check(
    differ.length === 0,
    `all: ${files[0].length} session files identical to stock pi's`,
    differ.slice(0, 3).join(", "),
  );
  const log = readLog(logs[1]);
  check(
    count(log, "swap extension all") === 1 && count(log, "call open") >= 1 && count(log, "call list") >= 1,
    `all: one swap of every static; pi called ours: ${[...new Set(log.filter((l) => l.startsWith("call ")))].join(", ")}`,
    JSON.stringify(log),
  );
}

// ---------------------------------------------------------------------------
// 3. Print mode: off, unverified pi, pi-native, no binary

console.log("swaps refused, and pi-native");
/** pi `bin` (a pi bin file; default stock pi) with `args` on the pkg side, to completion. */
function runBin(bin, args, env, side = pkg) {
  return new Promise((resolve) => {
    const child = spawn(N22, [bin, ...args], {
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
}
/** One print turn on the pkg side; { r, log: its PI_SESSION_NATIVE_LOG }. */
async function printTurn(name, { bin = STOCK_CLI, env = {}, args = ["--no-session", "-p", "hello"], side = pkg } = {}) {
  const file = join(side.root, `${name}.jsonl`);
  const r = await runBin(bin, args, { ...env, PI_SESSION_NATIVE_LOG: file }, side);
  return { r, log: readLog(file) };
}
const answered = (r) => r.code === 0 && /^reply #\d+/.test(r.stdout);
{
  const off = await printTurn("off", { env: { PI_SESSION_NATIVE_SWAP: "off" } });
  check(
    answered(off.r) && off.log.join() === "skip extension: off (PI_SESSION_NATIVE_SWAP)",
    "PI_SESSION_NATIVE_SWAP=off: nothing swapped",
    `${off.r.code} ${JSON.stringify(off.log)}`,
  );
  const settingsFile = join(pkg.agent, "settings.json");
  const settings = readFileSync(settingsFile, "utf8");
  writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(settings), piSessionNative: { swap: "off" } }));
  const offSettings = await printTurn("off-settings");
  writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(settings), piSessionNative: { swap: "all" } }));
  const allSettings = await printTurn("all-settings");
  writeFileSync(settingsFile, settings);
  check(
    answered(offSettings.r) &&
      offSettings.log.length === 1 &&
      /^skip extension: off \(piSessionNative\.swap in /.test(offSettings.log[0]) &&
      allSettings.log.join() === "swap extension all",
    'settings.json `"piSessionNative": { "swap": "off" | "all" }` chooses too',
    `${JSON.stringify(offSettings.log)} ${JSON.stringify(allSettings.log)}`,
  );
  const fakeVersion = fakePiVersion("1.6.1");
  const v = await printTurn("version", { bin: join(fakeVersion, "dist/bundle/cli.js") });
  check(
    answered(v.r) &&
      v.log.join() === "skip extension: pi 1.6.1 is not a version this SessionManager was verified against (1.6.0)",
    "pi 1.6.1: no swap",
    `${v.r.code} ${v.r.stderr.slice(0, 300)} ${JSON.stringify(v.log)}`,
  );
  // pi 1.6.0 whose SessionManager class was changed (one comment inside its bundled class)
  const modified = join(
    REPO,
    "node_modules/.cache/pi-session-native-test/pi-modified/node_modules/@earendil-works/pi-coding-agent",
  );
  rmSync(modified, { recursive: true, force: true });
  mkdirSync(modified, { recursive: true });
  cpSync(join(PI_DIR, "dist"), join(modified, "dist"), { recursive: true });
  cpSync(join(PI_DIR, "package.json"), join(modified, "package.json"));
  const chunks = join(modified, "dist/bundle/chunks");
  let patched = 0;
  for (const f of readdirSync(chunks)) {
    const text = readFileSync(join(chunks, f), "utf8");
    if (text.includes("class _SessionManager{")) {
      writeFileSync(join(chunks, f), text.replace("class _SessionManager{", "class _SessionManager{/* modified */"));
      patched++;
    }
  }
  const m = await printTurn("modified", { bin: join(modified, "dist/bundle/cli.js") });
  check(
    patched === 1 &&
      answered(m.r) &&
      m.log.join() ===
        "skip extension: pi 1.6.0's SessionManager is not the one this package was verified against (a modified pi?)",
    "pi 1.6.0 with a modified SessionManager class: no swap",
    `patched ${patched}, ${m.r.code} ${JSON.stringify(m.log)}`,
  );
  const nat = await printTurn("native", { bin: NATIVE_BIN });
  check(
    answered(nat.r) && nat.log.join() === "swap pi-native all,call inMemory,skip extension: swapped by pi-native",
    "pi-native with the package installed: one swap (pi-native's), the extension leaves it",
    `${nat.r.code} ${nat.r.stderr.slice(0, 300)} ${JSON.stringify(nat.log)}`,
  );
  // this checkout as the package: its node_modules holds a copy of pi, which the extension's import resolves to
  const copy = await printTurn("copy-of-pi", { args: ["-e", REPO, "--no-session", "-p", "hello"], side: bare });
  check(
    answered(copy.r) &&
      copy.log.join() ===
        "swap extension lists,skip extension: the extension got a copy of pi's module that pi does not run (is @earendil-works/pi-coding-agent installed in the package's own node_modules?)",
    "a package with its own copy of pi: the swap of that copy is undone, and said",
    `${copy.r.code} ${JSON.stringify(copy.log)}`,
  );
  const nb = await printTurn("no-binary", { args: ["-e", noBinary, "--no-session", "-p", "hello"], side: bare });
  check(
    answered(nb.r) && nb.log.length === 1 && /^skip extension: no native binary loads on /.test(nb.log[0]),
    "a package without its binary: pi answers (exit 0), nothing swapped",
    `${nb.r.code} ${nb.r.stderr.slice(0, 500)} ${JSON.stringify(nb.log)}`,
  );
}

// ---------------------------------------------------------------------------
// 4. Notices in the TUI: once per process, also after /new re-ran the factory

console.log("notices (TUI)");
async function noticeOnce(name, side, args, pattern, env = {}) {
  const t = tmuxPi("stock", side, args, { name: `pi-pkg-${process.pid}-${name.replace(/\W+/g, "-")}`, env });
  try {
    const first = await settled(t, (s) => READY(s) && pattern.test(s), `${name}: the notice`);
    const n1 = first.split("\n").filter((l) => pattern.test(l)).length;
    command("/new")(t);
    await sleep(300);
    const after = await settled(t, READY, `${name}: /new`);
    const n2 = after.split("\n").filter((l) => pattern.test(l)).length;
    t.keys("C-d");
    await t.closed();
    check(n1 === 1 && n2 <= 1, `${name}: one notice, none more after /new`, `${n1} then ${n2}:\n${after}`);
  } catch (e) {
    fail(name, `    ${e.message}`);
  } finally {
    t.kill();
  }
}
await noticeOnce(
  "a package without its binary",
  bare,
  ["-e", noBinary],
  /pi-session-native: no native binary loads on/,
);
await noticeOnce("PI_SESSION_NATIVE_SWAP=off", pkg, [], /pi-session-native: off \(PI_SESSION_NATIVE_SWAP\)/, {
  PI_SESSION_NATIVE_SWAP: "off",
});

// ---------------------------------------------------------------------------

registry.close();
await model.stop();
if (KEEP) console.log(`kept: ${work} ${sides.map((s) => s.root).join(" ")}`);
else for (const d of [work, bare.root, ...sides.map((s) => s.root)]) rmSync(d, { recursive: true, force: true });
finish(T0);
