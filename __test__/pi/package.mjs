// The pi package channel: stock pi with this package installed as a pi package, against stock pi
// without it, on the same scripts (the mock model, the TUI under tmux), as run.mjs does for pi-native.
// The pi is node_modules' (1.6.0), or PI_TEST_PI=<version | pi package dir> (`npm test` also runs the
// /resume rows on stock pi 1.5.2: --quick).
//
//   npm run test:pi-package      (any Node >= 20; pi runs on Node 22, fetched into .cache/ if needed)
//
// The package is the packed tarball (`npm pack`), installed the way users install it:
// `pi install npm:pi-session-native`, from a loopback npm registry (127.0.0.1) that serves that tarball.
// Which statics were swapped and which swapped statics pi called come from PI_SESSION_NATIVE_LOG.
// Checks:
//   - the in-session /resume rows (Current Folder, then All), and again after /new, equal stock pi's
//     (the default, `all`, and PI_SESSION_NATIVE_SWAP=lists); pi called our list/listAll; one swap per
//     process although pi re-ran the extension's factory, in the profile of the pi under test;
//   - the default (all): /resume into a session, a turn, /name, /tree, /fork and a turn give the same
//     session files as stock pi, through our open and forkFrom;
//   - PI_SESSION_NATIVE_SWAP=off (and the same in settings.json) swaps nothing;
//   - the gate: a re-bundled pi 1.6.0 labelled 1.6.1 is swapped; a one-line change in the class or in
//     buildSessionInfo gets no swap and one notice;
// --quick: the install and the /resume rows only.
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
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { encodeCwd, generateFolder } from "../../support/gen.mjs";
import {
  checker,
  ensureTmux,
  fakePiVersion,
  makeSide,
  NATIVE_BIN,
  node22,
  PI_VERSION,
  REPO,
  runPi,
  screenText,
  sessionFiles,
  settledScreen,
  sideNormalizer,
  STOCK_CLI,
  startMockModel,
  tmuxPi,
} from "../../support/pi-harness.mjs";

const T0 = performance.now();
const N22 = node22();
const KEEP = process.env.PI_TEST_KEEP === "1";
const QUICK = process.argv.includes("--quick");
/** The first /resume flow's mode: `lists`, or the default (`all`) in the quick run, which has no other flow. */
const RESUME_MODE = QUICK ? "all" : "lists";
/** The profile ours runs in this pi (lib/profile.js: the table's row for its version). */
const PROFILE = createRequire(import.meta.url)("../../lib/profile.js").forVersion(PI_VERSION);
/** The swap record of a pi made from node_modules' 1.6.0 (its variants, this checkout's own copy), in the log. */
const SWAP_OF_DEV_PI = `swap extension all${PROFILE === "1.6" ? "" : " in profile 1.6"}`;
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
      r.event === "call"
        ? `call ${r.name}`
        : r.event === "swap"
          ? `swap ${r.by} ${r.mode}${r.profile === PROFILE ? "" : ` in profile ${r.profile}`}`
          : `skip ${r.by}: ${r.why}`,
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
      existsSync(join(installed, "pi", "extension.mjs")) &&
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

console.log(
  `stock pi ${PI_VERSION}: /resume rows (the package, ${QUICK ? "the default, all" : "PI_SESSION_NATIVE_SWAP=lists: list and listAll"})`,
);
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
    logs.map((f) => ({ PI_SESSION_NATIVE_LOG: f, ...(QUICK ? {} : { PI_SESSION_NATIVE_SWAP: RESUME_MODE }) })),
  );
  const log = readLog(logs[1]);
  check(readLog(logs[0]).length === 0, "stock pi alone: nothing of ours runs");
  check(
    count(log, `swap extension ${RESUME_MODE}`) === 1 &&
      !log.some((l) => l.startsWith("swap ") && l !== `swap extension ${RESUME_MODE}`),
    `one swap (${QUICK ? "every static" : "list and listAll"}, by the extension, profile ${PROFILE}) although /new re-ran its factory`,
    JSON.stringify(log),
  );
  check(
    count(log, "call list") >= 2 && count(log, "call listAll") >= 1,
    `pi's picker called our list ${count(log, "call list")}× and listAll ${count(log, "call listAll")}×`,
    JSON.stringify(log),
  );
  check(!screens.some((s) => /pi-session-native:/.test(s)), "no notice when the swap is made");
}

if (!QUICK) {
  console.log("the default (all): /resume rows, resume, a turn, /name, /tree, /fork, a turn");
  {
    const logs = sides.map((s) => join(s.root, "all.jsonl"));
    await tuiBoth(
      "all",
      [],
      [
        ["started", READY, command("/resume")],
        ["/resume: Current Folder", LOADED_HERE, (t) => t.keys("Tab")],
        ["/resume: All", LOADED_ALL, (t) => t.keys("Tab")],
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
      logs.map((f) => ({ PI_SESSION_NATIVE_LOG: f })),
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
      `all: one swap of every static (profile ${PROFILE}); pi called ours: ${[...new Set(log.filter((l) => l.startsWith("call ")))].join(", ")}`,
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
  async function printTurn(
    name,
    { bin = STOCK_CLI, env = {}, args = ["--no-session", "-p", "hello"], side = pkg } = {},
  ) {
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
    // the gate looks at pi's session module, not at its version (scripts/pi-variants.mjs)
    const rebundled = fakePiVersion("1.6.1", "rebundled");
    const v = await printTurn("rebundled", { bin: join(rebundled, "dist/bundle/cli.js") });
    check(
      answered(v.r) && v.log.join() === SWAP_OF_DEV_PI,
      "pi 1.6.1, 1.6.0 re-bundled (renumbered locals, renamed chunk): swapped",
      `${v.r.code} ${v.r.stderr.slice(0, 300)} ${JSON.stringify(v.log)}`,
    );
    for (const [kind, what] of [
      ["class", "a one-line change in its SessionManager class"],
      ["listing", "a one-line change in buildSessionInfo"],
    ]) {
      const changed = fakePiVersion("1.6.1", kind);
      const m = await printTurn(kind, { bin: join(changed, "dist/bundle/cli.js") });
      check(
        answered(m.r) &&
          m.log.length === 1 &&
          /^skip extension: pi 1\.6\.1's session module \(its bundle\) is not one this package was verified against \(verified: pi 1\.0\.3, .*\); update pi-session-native/.test(
            m.log[0],
          ),
        `pi 1.6.1 with ${what}: no swap`,
        `${m.r.code} ${JSON.stringify(m.log)}`,
      );
    }
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
          `${SWAP_OF_DEV_PI},skip extension: the extension got a copy of pi's module that pi does not run (is @earendil-works/pi-coding-agent installed in the package's own node_modules?)`,
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
  async function noticeOnce(name, side, args, pattern, env = {}, bin = undefined) {
    const t = tmuxPi("stock", side, args, { name: `pi-pkg-${process.pid}-${name.replace(/\W+/g, "-")}`, env, bin });
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
  {
    // a changed session module: one notice (the TUI through that pi's bin)
    // it says the version of the pi under test, so that pi shows no changelog on start
    const changed = fakePiVersion(PI_VERSION, "class");
    await noticeOnce(
      `pi ${PI_VERSION} with a changed class`,
      pkg,
      [],
      new RegExp(
        `pi-session-native: pi ${PI_VERSION.replaceAll(".", "\\.")}'s session module \\(its bundle\\) is not one`,
      ),
      {},
      join(changed, "dist/bundle/cli.js"),
    );
  }
  await noticeOnce("PI_SESSION_NATIVE_SWAP=off", pkg, [], /pi-session-native: off \(PI_SESSION_NATIVE_SWAP\)/, {
    PI_SESSION_NATIVE_SWAP: "off",
  });
}

// ---------------------------------------------------------------------------

registry.close();
await model.stop();
if (KEEP) console.log(`kept: ${work} ${sides.map((s) => s.root).join(" ")}`);
else for (const d of [work, bare.root, ...sides.map((s) => s.root)]) rmSync(d, { recursive: true, force: true });
finish(T0);
