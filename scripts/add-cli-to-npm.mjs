// Release helper: copies each target's pi-sessions binary (downloaded into cli/<target>/) into its
// npm/<platform>/ package and lists it in that package's `files`, so `npx pi-sessions` finds it.
import { chmodSync, copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const PLATFORM = createRequire(import.meta.url)("../lib/load.js").PLATFORM_OF_TARGET;
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
