"use strict";
// A bundle of pi's unbundled CLI (`dist/cli.js` and everything it imports) with our module in place of
// `dist/core/session-manager.js`, for pi-native's startup: pi's ~1,000 modules, and ~1,000 more of its
// dependencies, load in ~1.2 s on their own; pi's own `pi` bin is a bundle and starts in ~0.5 s. Loading
// this bundle costs about what pi's does.
//
// Built once per installed pi (its path, version and package.json mtime), per pi-session-native location
// and per version of this file, into <cache>/bundles/<key>/ (PI_NATIVE_CACHE_DIR, else $XDG_CACHE_HOME or
// ~/.cache, /pi-session-native), by rolldown. Written to a temp dir and renamed, so a half-built bundle is
// never used. Each module keeps its own `import.meta.url` (replaced by its original file URL before
// bundling), so pi finds its package directory, themes, templates, workers and extensions as unbundled.
const { createHash } = require("node:crypto");
const {
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} = require("node:fs");
const { homedir } = require("node:os");
const { dirname, join } = require("node:path");
const { pathToFileURL } = require("node:url");

const OURS = join(__dirname, "..");
const TARGET = "/dist/core/session-manager.js";

function cacheRoot(env = process.env) {
  if (env.PI_NATIVE_CACHE_DIR) return env.PI_NATIVE_CACHE_DIR;
  if (process.platform === "win32" && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, "pi-session-native");
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "pi-session-native");
}

/** Where the bundle of the pi at `piDir` lives (whether or not it is built yet). */
function bundleDir(piDir, env = process.env) {
  const real = realpathSync(piDir);
  const pkgFile = join(real, "package.json");
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8"));
  const ours = JSON.parse(readFileSync(join(OURS, "package.json"), "utf8"));
  const key = createHash("sha256")
    .update(
      JSON.stringify([
        real,
        pkg.version,
        statSync(pkgFile).mtimeMs,
        realpathSync(OURS),
        ours.version,
        readFileSync(__filename, "utf8"),
      ]),
    )
    .digest("hex")
    .slice(0, 16);
  return join(cacheRoot(env), "bundles", `pi-${pkg.version}-${key}`);
}

/** The bundle's entry if it is built, else null. */
function cachedEntry(piDir, env = process.env) {
  const dir = bundleDir(piDir, env);
  const entry = join(dir, "cli.mjs");
  return existsSync(join(dir, "complete")) && existsSync(entry) ? entry : null;
}

function loadRolldown() {
  try {
    return require("rolldown");
  } catch {
    return null;
  }
}

/** Whether a bundle can be built here (rolldown installed). */
const canBuild = () => loadRolldown() !== null;

const META = /\bimport\.meta\.(url|dirname|filename)\b/g;

/** Build the bundle of the pi at `piDir`; resolves to its entry file. */
async function build(piDir, env = process.env) {
  const rolldown = loadRolldown();
  if (!rolldown) throw new Error("rolldown is not installed");
  const real = realpathSync(piDir);
  const dir = bundleDir(real, env);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const oursUrl = pathToFileURL(join(OURS, "index.mjs")).href;
  const piDist = `${real}/dist/`;
  const bundle = await rolldown.rolldown({
    input: join(real, "dist", "cli.js"),
    platform: "node",
    logLevel: "silent",
    external: [/\.node$/, /^node:/],
    plugins: [
      {
        name: "pi-session-native",
        resolveId(source, importer) {
          if (!importer || !source.endsWith("session-manager.js")) return null;
          const resolved = join(dirname(importer), source);
          if (resolved === `${real}${TARGET}`) return { id: oursUrl, external: true };
          return null;
        },
        transform(code, id) {
          if (!id.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(id)) return null;
          if (!code.includes("import.meta.")) return null;
          const url = pathToFileURL(id).href;
          return {
            code: code.replace(META, (_, what) =>
              JSON.stringify(what === "url" ? url : what === "dirname" ? dirname(id) : id),
            ),
            map: null,
          };
        },
      },
    ],
  });
  try {
    await bundle.write({
      dir: tmp,
      format: "esm",
      entryFileNames: "cli.mjs",
      chunkFileNames: "c-[hash].mjs",
      sourcemap: false,
      // Whitespace and comments only, as pi's own bundle (names and code stay as they are):
      // 11 MB instead of 14 MB, and startup 474 ms against stock pi's 478 ms (unminified: +83 ms).
      minify: { compress: false, mangle: false, codegen: { removeWhitespace: true } },
    });
  } finally {
    await bundle.close();
  }
  writeFileSync(join(tmp, "complete"), JSON.stringify({ pi: real, built: new Date().toISOString(), from: piDist }));
  // Another process may have finished first, and may be running it (its chunks load lazily): keep that one.
  if (existsSync(join(dir, "complete"))) {
    rmSync(tmp, { recursive: true, force: true });
    return join(dir, "cli.mjs");
  }
  rmSync(dir, { recursive: true, force: true }); // an incomplete leftover
  try {
    renameSync(tmp, dir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(dir, "complete"))) throw e;
  }
  return join(dir, "cli.mjs");
}

module.exports = { bundleDir, cachedEntry, build, canBuild, cacheRoot };
