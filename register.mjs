// `node --import pi-session-native/register <pi>/dist/cli.js …`: pi's unbundled CLI on this package's
// SessionManager (pi 1.6.x only; any other pi keeps its own, with one line on stderr).
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { install } = require("./lib/pi-hook.js");

if (!install()) {
  process.stderr.write(
    `pi-session-native/register: Node ${process.versions.node} has no module.registerHooks() (needs >= 22.15); pi runs with its own SessionManager\n`,
  );
}
