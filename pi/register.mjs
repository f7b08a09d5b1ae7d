// `node --import pi-session-native/register <pi>/dist/cli.js …`: pi's unbundled CLI on this package's
// SessionManager when the gate passes pi's session module (pi/gate.js); any other pi keeps its own, with
// one line on stderr, as does any pi where no native binary of ours loads.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { install } = require("./resolve-hook.js");
const load = require("../lib/load.js");

if (load.bindingError()) {
  // Our module would only hand pi back its own class (lib/load.js): no hook.
  if (load.noFallback())
    throw new Error(`pi-session-native/register: ${load.whatIsMissing()}, and ${load.NO_FALLBACK} is set`);
  process.stderr.write(`pi-session-native/register: ${load.whatIsMissing()}; pi runs with its own SessionManager\n`);
} else if (!install()) {
  process.stderr.write(
    `pi-session-native/register: Node ${process.versions.node} has no module.registerHooks() (needs >= 22.15); pi runs with its own SessionManager\n`,
  );
}
