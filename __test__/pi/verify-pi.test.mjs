// scripts/verify-pi.mjs on the synthetic next releases of pi 1.6.0 (scripts/pi-variants.mjs), labelled
// 1.6.1: a one-line change in buildSessionInfo (the listing counts one message more) is not verified,
// and the report names the failing differential tests; the same module re-bundled is verified, with
// 1.6.0's fingerprints. Two files of the differential suites keep it short (--files; runtime.test.mjs
// lists files and so sees the listing change); the pi CLI tests are not run (--no-cli).
// And scripts/pi-release-watch.mjs's paths that need no registry: a release in the table, a dry run.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../../scripts/node-bin.mjs";
import { devPiVariant } from "../../scripts/pi-variants.mjs";
import { makeTempRoot } from "../helpers/tmp.mjs";

const FILES = "pi/pi-versions.test.mjs,list/runtime.test.mjs";
const row160 = JSON.parse(readFileSync(join(REPO, "pi/verified.json"), "utf8")).releases.find((r) => r.pi === "1.6.0");

const variant = (kind) => devPiVariant(`verify-${kind}`, kind, "1.6.1");

/** verify-pi on `dir`: { code, out }. */
const verify = (dir) =>
  new Promise((done, failed) => {
    const child = spawn(
      process.execPath,
      [join(REPO, "scripts/verify-pi.mjs"), dir, "--quick", "--no-cli", "--files", FILES],
      { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    child.on("error", failed);
    child.on("close", (code) => done({ code, out }));
  });

describe("verify:pi", () => {
  it("does not verify a pi whose buildSessionInfo counts one message more, and names the failing tests", async () => {
    const { code, out } = await verify(variant("listing"));
    expect(out).toMatch(/^not verified: pi 1\.6\.1$/m);
    expect(out).toMatch(/FAILED\s+differential suites/);
    expect(out).toMatch(/FAIL list\/runtime\.test\.mjs > .*listings/);
    expect(out).toMatch(/messageCount: number differs/);
    expect(out).toContain("module fingerprint not in the table (new session module)");
    expect(out).not.toMatch(/^verified: /m);
    expect(code, out).toBe(1);
  }, 120_000);

  it("verifies the same module re-bundled, with 1.6.0's fingerprints", async () => {
    const { code, out } = await verify(variant("rebundled"));
    expect(out).toMatch(/^verified: pi 1\.6\.1$/m);
    const json = out.slice(out.indexOf("\n{", out.search(/^verified: /m)) + 1);
    const row = JSON.parse(json.slice(0, json.indexOf("\n}") + 2));
    expect(row).toMatchObject({ pi: "1.6.1", profile: "1.6", module: row160.module, bundle: row160.bundle });
    expect(row.verified).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(out).toContain("already covered: the table's row for pi 1.6.0");
    expect(code, out).toBe(0);
  }, 120_000);
});

describe("the pi release watch", () => {
  const watch = (args, env = {}) =>
    spawnSync(process.execPath, [join(REPO, "scripts/pi-release-watch.mjs"), ...args], {
      cwd: REPO,
      encoding: "utf8",
      env: { ...process.env, ...env },
    });

  it("has nothing to do for a release in the table, and says so to the workflow", () => {
    const dir = makeTempRoot("watch");
    const out = join(dir, "github-output");
    writeFileSync(out, "");
    const r = watch(["--version", "1.6.0", "--out", dir], { GITHUB_OUTPUT: out });
    expect(r.stdout).toContain("pi 1.6.0 is in the table");
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(out, "utf8")).toBe("action=none\nversion=1.6.0\nverified=true\n");
  });

  it("would verify a release missing from the table (--dry-run, --table)", () => {
    const dir = makeTempRoot("watch");
    const table = JSON.parse(readFileSync(join(REPO, "pi/verified.json"), "utf8"));
    table.releases = table.releases.filter((r) => r.pi !== "1.5.2");
    writeFileSync(join(dir, "table.json"), JSON.stringify(table, null, 2));
    const r = watch(["--version", "1.5.2", "--table", join(dir, "table.json"), "--dry-run", "--quick"]);
    expect(r.stdout).toMatch(/pi 1\.5\.2 is not in the table .*would run npm run verify:pi -- 1\.5\.2 --quick/);
    expect(r.status, r.stderr).toBe(0);
  });

  it("refuses what is not a version", () => {
    expect(watch(["--version", "latest"]).status).toBe(2);
  });
});
