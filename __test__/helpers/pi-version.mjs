// Which pi release the differential suites compare with: the reference module, and the profile ours runs.
//
//   DIFF_PI=<version>  the reference is that release's dist/core/session-manager.js, installed by
//                      scripts/pi-cache.mjs into .cache/pi/<version>/ (installed first if missing),
//                      and ours runs that release's profile (PI_SESSION_NATIVE_PI=<version>, set here
//                      before any test loads our module: the vitest setup file imports this one).
//   unset              the reference is node_modules' pi (1.6.0), and ours picks the profile of that
//                      installed pi, as a library does (lib/profile.js).
// A PI_SESSION_NATIVE_PI set by the caller is left alone (see the end of this file).
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { installPi, PI_PACKAGE, piVersion } from "../../scripts/pi-cache.mjs";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** The release asked for, or "" for node_modules' pi. */
export const DIFF_PI = process.env.DIFF_PI || "";

/** The reference pi's package directory. */
export const REF_DIR = DIFF_PI ? installPi(DIFF_PI) : join(REPO, "node_modules", PI_PACKAGE);

/** Its version ("1.4.0"). */
export const REF_VERSION = piVersion(REF_DIR);

/** Its session module, by file URL (the package's `exports` do not expose it). */
export const REF_URL = pathToFileURL(join(REF_DIR, "dist", "core", "session-manager.js")).href;

const profile = createRequire(import.meta.url)("../../lib/profile.js");

/** The profile of the reference's release ("1.0", "1.5", "1.6") and its switches. */
export const REF_PROFILE = profile.forVersion(REF_VERSION);
export const REF_SWITCHES = profile.PROFILES[REF_PROFILE];

// A PI_SESSION_NATIVE_PI already set wins (to check that the suites fail when ours runs another
// release's profile), with a warning when its profile is not the reference's.
const pinned = process.env[profile.ENV];
if (pinned) {
  const ours = profile.forVersion(pinned, profile.ENV);
  if (ours !== REF_PROFILE && !globalThis.__diffPiWarned) {
    globalThis.__diffPiWarned = true;
    console.warn(
      `[diff] ${profile.ENV}=${pinned}: ours runs profile ${ours} against pi ${REF_VERSION} (profile ${REF_PROFILE}): differences are expected.`,
    );
  }
} else if (DIFF_PI) {
  process.env[profile.ENV] = REF_VERSION;
}
