import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["__test__/**/*.test.mjs"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Every test file gets its own PI_CODING_AGENT_DIR in a temp dir, so nothing touches the real home.
    setupFiles: ["./__test__/helpers/setup.mjs"],
  },
});
