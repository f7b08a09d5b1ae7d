// The timed steps and the fail-fast commands of the cross-target scripts (arm64.mjs, win32.mjs):
//
//   const { step, run, majors, report } = steps("win32");
//   step("build", () => run("cargo", ["build"]));   // "[win32] build", then its time
//   report();                                        // each step's time and the total
import { spawnSync } from "node:child_process";
import { REPO } from "./node-bin.mjs";

export function steps(tag) {
  const done = [];
  const t0 = Date.now();
  return {
    /** Runs `fn` as a named step and prints its time. */
    step(name, fn) {
      const t = Date.now();
      console.log(`\n[${tag}] ${name}`);
      fn();
      const s = (Date.now() - t) / 1000;
      done.push([name, s]);
      console.log(`[${tag}] ${name}: ${s.toFixed(1)} s`);
    },
    /** Runs a command in the repo (stdio inherited) and exits the process if it fails. */
    run(cmd, args, opts = {}) {
      const r = spawnSync(cmd, args, { stdio: "inherit", cwd: REPO, ...opts, env: { ...process.env, ...opts.env } });
      if (r.status !== 0) {
        console.error(`[${tag}] failed (${r.status ?? r.signal}): ${cmd} ${args.join(" ")}`);
        process.exit(1);
      }
    },
    /** Prints each step's time and the total, when there was more than one step. */
    report() {
      if (done.length < 2) return;
      console.log(`\n[${tag}] times:`);
      for (const [name, s] of done) console.log(`  ${s.toFixed(1).padStart(7)} s  ${name}`);
      console.log(`  ${((Date.now() - t0) / 1000).toFixed(1).padStart(7)} s  total`);
    },
  };
}

/** "22 24" or "22,24" as [22, 24]. */
export const majors = (v) =>
  v
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);

/**
 * `npx napi build` for a cross target, as package.json's `build` runs it for the host: the addon
 * crate's library, the generated loader and types (binding.js, binding.d.ts). `crossCompile`: napi's
 * `-x` (cargo-zigbuild for musl and macOS).
 */
export function napiBuildArgs(target, { crossCompile = false } = {}) {
  const args = ["napi", "build", "--platform", "--release", "--js", "binding.js", "--dts", "binding.d.ts"];
  return [...args, "--target", target, ...(crossCompile ? ["-x"] : []), "--", "--lib"];
}
