// pi releases for tests and verify:pi, installed from the npm registry into `.cache/pi/<version>/`
// (gitignored) with their own dependencies, as a user's `npm install` gets them. A second call finds
// the install and costs nothing; npm's cache makes a reinstall cheap.
//
//   import { installPi } from "./pi-cache.mjs";
//   const piDir = installPi("1.5.2");   // .cache/pi/1.5.2/node_modules/@earendil-works/pi-coding-agent
//   node scripts/pi-cache.mjs 1.5.2 1.6.0   // prints the paths (and installs what is missing)
//
// A path instead of a version (a pi package directory, or a .tgz) is installed as it is, under
// `.cache/pi/local-<hash>/`. pi 1.0.3 declares its sibling packages as ^1.0.3, so its install gets
// them at a newer version; its SDK entry (dist/index.js) then fails to import, while its CLI bundle
// and dist/core/session-manager.js load.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const PI_PACKAGE = "@earendil-works/pi-coding-agent";
export const PI_CACHE = join(REPO, ".cache", "pi");

/** The releases in the verified table (pi/verified.json), oldest first. */
export function verifiedReleases() {
  return JSON.parse(readFileSync(join(REPO, "pi", "verified.json"), "utf8")).releases.map((r) => r.pi);
}

/** `spec` is a local path (a directory or a tarball), not a version. */
export const isPath = (spec) => /[\\/]/.test(spec) || spec.endsWith(".tgz");

/**
 * Install pi `spec` (a version, or a path to a pi package or tarball) into the cache; returns its
 * package directory. Throws with npm's own words when the install fails.
 */
export function installPi(spec, { log = () => {} } = {}) {
  const local = isPath(spec);
  const key = local
    ? `local-${createHash("sha256")
        .update(resolve(spec) + String(statSync(spec).mtimeMs))
        .digest("hex")
        .slice(0, 12)}`
    : spec;
  const root = join(PI_CACHE, key);
  const piDir = join(root, "node_modules", PI_PACKAGE);
  const done = join(root, ".installed");
  if (existsSync(done) && existsSync(join(piDir, "package.json"))) return piDir;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "package.json"), `${JSON.stringify({ name: "pi-cache", private: true })}\n`);
  log(`installing ${local ? resolve(spec) : `${PI_PACKAGE}@${spec}`} into ${root}`);
  try {
    execFileSync(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--no-package-lock",
        "--ignore-scripts",
        "--loglevel=error",
        local ? resolve(spec) : `${PI_PACKAGE}@${spec}`,
      ],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 },
    );
  } catch (e) {
    const why = String(e.stderr ?? e.message)
      .trim()
      .split("\n")
      .slice(-3)
      .join(" ");
    throw new Error(`cannot install pi ${spec}: ${why}`);
  }
  if (!existsSync(join(piDir, "package.json"))) throw new Error(`installing pi ${spec} gave no ${piDir}`);
  writeFileSync(done, "");
  return piDir;
}

/** pi's version at `piDir`. */
export const piVersion = (piDir) => JSON.parse(readFileSync(join(piDir, "package.json"), "utf8")).version;

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const specs = process.argv.slice(2);
  for (const spec of specs.length ? specs : verifiedReleases())
    console.log(installPi(spec, { log: (m) => console.error(m) }));
}
