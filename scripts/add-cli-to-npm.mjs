// Release helper: copies each target's pi-sessions binary (downloaded into cli/<target>/) into its
// npm/<platform>/ package and lists it in that package's `files`, so `npx pi-sessions` finds it.
import { chmodSync, copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const PLATFORM = {
  "x86_64-unknown-linux-gnu": "linux-x64-gnu",
  "aarch64-unknown-linux-gnu": "linux-arm64-gnu",
  "x86_64-unknown-linux-musl": "linux-x64-musl",
  "aarch64-unknown-linux-musl": "linux-arm64-musl",
  "x86_64-apple-darwin": "darwin-x64",
  "aarch64-apple-darwin": "darwin-arm64",
  "x86_64-pc-windows-msvc": "win32-x64-msvc",
  "aarch64-pc-windows-msvc": "win32-arm64-msvc",
};
const root = process.argv[2] ?? "cli";
for (const dir of readdirSync(root)) {
  const target = dir.replace(/^cli-/, "");
  const platform = PLATFORM[target];
  if (!platform) throw new Error(`unknown target ${target}`);
  const exe = target.includes("windows") ? "pi-sessions.exe" : "pi-sessions";
  const from = join(root, dir, exe);
  if (!existsSync(from)) throw new Error(`missing ${from}`);
  const to = join("npm", platform, exe);
  copyFileSync(from, to);
  chmodSync(to, 0o755);
  const pkgPath = join("npm", platform, "package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  if (!pkg.files.includes(exe)) pkg.files.push(exe);
  writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);
  console.log(`${to}`);
}
