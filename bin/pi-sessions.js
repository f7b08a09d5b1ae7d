#!/usr/bin/env node
// `npx pi-sessions …`: runs the native pi-sessions binary.
//
// Looks for it, in order: $PI_SESSIONS_BIN; the platform package this install uses
// (pi-session-native-<platform>, which ships the binary beside the addon); a source
// checkout's target/release. In a source checkout (crates/pi-sessions beside this folder)
// without a binary, it builds one once with cargo, saying so on stderr. The command itself
// is documented in docs/cli.md.
"use strict";

const { spawnSync } = require("node:child_process");
const { existsSync } = require("node:fs");
const { dirname, join } = require("node:path");

const exe = process.platform === "win32" ? "pi-sessions.exe" : "pi-sessions";

function platformPackage() {
  const { platform, arch } = process;
  if (platform === "linux") {
    const glibc = process.report?.getReport?.().header?.glibcVersionRuntime;
    return `pi-session-native-linux-${arch}-${glibc ? "gnu" : "musl"}`;
  }
  if (platform === "win32") return `pi-session-native-win32-${arch}-msvc`;
  return `pi-session-native-${platform}-${arch}`;
}

function findBinary() {
  if (process.env.PI_SESSIONS_BIN) return process.env.PI_SESSIONS_BIN;
  try {
    const dir = dirname(require.resolve(`${platformPackage()}/package.json`));
    if (existsSync(join(dir, exe))) return join(dir, exe);
  } catch {
    // not installed: try a source checkout
  }
  const local = join(__dirname, "..", "target", "release", exe);
  return existsSync(local) ? local : null;
}

const repo = join(__dirname, "..");

// A source checkout: build the CLI once (`cargo build --release --bin pi-sessions`).
function buildFromSource() {
  if (!existsSync(join(repo, "crates", "pi-sessions", "Cargo.toml"))) return null;
  process.stderr.write("pi-sessions: no binary yet; building it once: cargo build --release --bin pi-sessions\n");
  const r = spawnSync("cargo", ["build", "--release", "--bin", "pi-sessions"], {
    cwd: repo,
    stdio: ["ignore", process.stderr, "inherit"],
  });
  if (r.error) {
    process.stderr.write(`pi-sessions: cannot run cargo (${r.error.message})\n`);
    return null;
  }
  const local = join(repo, "target", "release", exe);
  return r.status === 0 && existsSync(local) ? local : null;
}

const bin = findBinary() ?? buildFromSource();
if (bin === null) {
  process.stderr.write(
    "pi-sessions: no binary for this platform. Build it from source with\n" +
      "  cargo build --release --bin pi-sessions   (in a checkout of pi-session-native)\n" +
      "or install it with `cargo install --path <checkout>/crates/pi-sessions`; PI_SESSIONS_BIN may point at it.\n",
  );
  process.exit(2);
}
const r = spawnSync(bin, process.argv.slice(2), { stdio: "inherit" });
if (r.error) {
  process.stderr.write(`pi-sessions: ${r.error.message}\n`);
  process.exit(2);
}
if (r.signal) process.kill(process.pid, r.signal);
process.exit(r.status ?? 1);
