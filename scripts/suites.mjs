// The differential suites: the test files that run pi's reference and ours side by side
// (__test__/helpers/differential.md), by API area. The areas of __test__ also hold tests of ours
// alone, so the scripts that run the reference's suites as a set name them here.
//   scripts/pi-versions.mjs   each against every pi release's own module (DIFF_PI)
//   scripts/arm64.mjs         under qemu (FULL), with the pi-sessions CLI's differential test
// Paths relative to __test__.

/** Every differential suite whose reference is the pi release under test (DIFF_PI). */
export const DIFFERENTIAL = [
  "append/aliasing.test.mjs",
  "append/in-process.test.mjs",
  "append/random-ops.test.mjs",
  "context/free-functions.test.mjs",
  "files-and-errors/fs-errors.test.mjs",
  "list/collation.test.mjs",
  "list/listing-index.test.mjs",
  "list/progress-yield.test.mjs",
  "list/runtime.test.mjs",
  "open/cold-ops.test.mjs",
  "open/files.test.mjs",
  "open/mapped-strings.test.mjs",
  "pi/pi-versions.test.mjs",
  "tree/identity.test.mjs",
];

/** The pi-sessions CLI judged by pi 1.6.0's class: loads neither ours nor DIFF_PI's module. */
export const CLI_DIFFERENTIAL = ["cli/lifecycle.test.mjs"];
