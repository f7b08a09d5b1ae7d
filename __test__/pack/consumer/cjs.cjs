// CommonJS consumer.
"use strict";
const api = require("pi-session-native");
const { smoke, loadedAddon } = require("./smoke.cjs");

const where = require.resolve("pi-session-native");
if (!where.includes("/node_modules/pi-session-native/")) throw new Error(`resolved outside node_modules: ${where}`);
if (require("pi-session-native/package.json").name !== "pi-session-native") throw new Error("package.json export");
smoke(api).then(
  (r) => console.log(JSON.stringify({ cjs: r, entry: where.split("/node_modules/")[1], addon: loadedAddon() })),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
