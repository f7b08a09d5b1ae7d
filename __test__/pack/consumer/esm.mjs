// ESM consumer: named, default and namespace imports of the installed package.
import def, * as ns from "pi-session-native";
import { SessionManager, buildSessionContext, CURRENT_SESSION_VERSION } from "pi-session-native";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const { smoke, loadedAddon, EXPORTS } = require("./smoke.cjs");

const where = fileURLToPath(import.meta.resolve("pi-session-native"));
if (!where.includes("/node_modules/pi-session-native/")) throw new Error(`resolved outside node_modules: ${where}`);
if (def.SessionManager !== SessionManager || ns.SessionManager !== SessionManager)
  throw new Error("default/namespace mismatch");
if (ns.buildSessionContext !== buildSessionContext || CURRENT_SESSION_VERSION !== 3)
  throw new Error("named export mismatch");
for (const name of EXPORTS) if (!(name in ns)) throw new Error(`ESM namespace lacks ${name}`);
if (require("pi-session-native").SessionManager !== SessionManager)
  throw new Error("ESM and CJS see different classes");
console.log(JSON.stringify({ esm: await smoke(ns), entry: where.split("/node_modules/")[1], addon: loadedAddon() }));
