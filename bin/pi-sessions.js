#!/usr/bin/env node
// `npx pi-sessions …`: runs the native pi-sessions binary.
//
// Looks for it, in order: $PI_SESSIONS_BIN; the platform package this install uses
// (pi-session-native-<platform>, which ships the binary beside the addon); a source
// checkout's target/release. The command itself is documented in docs/cli.md.
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

const bin = findBinary();
if (bin === null) {
  process.stderr.write(
    "pi-sessions: no binary for this platform. Build it from source with\n" +
      "  cargo build --release --bin pi-sessions   (in a checkout of pi-session-native)\n" +
      "or install it with `cargo install --path <checkout>`; PI_SESSIONS_BIN may point at it.\n",
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
