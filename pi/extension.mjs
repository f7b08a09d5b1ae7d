// pi-session-native as a pi package: `pi install npm:pi-session-native` loads this extension on
// every start (package.json's `pi.extensions`). It replaces the statics of pi's own SessionManager
// class with ours (pi/swap.js): every one by default (`all`), so the /resume picker lists natively and
// resuming into a big session, /fork and clone run natively too; PI_SESSION_NATIVE_SWAP=lists (or
// `"piSessionNative": { "swap": "lists" }` in pi's settings.json) swaps only `list` and `listAll`;
// `off` changes nothing.
//
// It swaps only when the gate passes the session module pi runs (pi/gate.js: its fingerprint is in
// pi/verified.json, whatever pi's version says), the native binary really loads (not the package's
// fallback to pi's own class) and pi is not already on our module (pi-native, or `--import
// pi-session-native/register`). Otherwise it changes nothing and says why once per process, through
// ctx.ui.notify (pi silences process.emitWarning). pi re-runs extension factories on /resume, /new,
// /fork and /reload: the swap is one per process.
//
// Plain JavaScript (ESM). pi's module is imported statically: pi's loader maps that name to the module
// instance pi runs (a CommonJS require() of it is not mapped). Our own package is loaded lazily with
// Node's require, inside a try: a failure of ours can never stop pi from starting, and our module is
// loaded once per process (pi's loader would evaluate it afresh on every reload).

import * as pi from "@earendil-works/pi-coding-agent";
import { createRequire } from "node:module";

const NOTICE_SHOWN = Symbol.for("pi-session-native.noticeShown");
const NAME = "pi-session-native";

/** Decide and, where allowed, swap. Returns { status, notice? } (notice: what the user is told once). */
function decide() {
  const ours = createRequire(import.meta.url);
  const swap = ours("./swap.js");
  const cls = pi.SessionManager;
  const skip = (why, level = "warning") => {
    const status = `${NAME}: ${why}; pi keeps its own SessionManager`;
    swap.log({ event: "skip", by: "extension", why });
    return { status, notice: status, level };
  };
  if (swap.isOurs(cls)) {
    swap.log({ event: "skip", by: "extension", why: "pi runs on our module" });
    const status = `${NAME}: pi already runs on this package's module (pi-session-native/register); nothing to swap`;
    return { status, notice: status, level: "info" };
  }
  const prior = swap.swapped(cls);
  if (prior) {
    const status = `${NAME}: ${prior.mode === "all" ? "every static" : prior.names.join(" and ")} of pi's SessionManager ${prior.names.length === 1 ? "is" : "are"} native (${prior.by})`;
    // pi-native did it before pi started; the extension's own earlier swap (a re-run factory) is silent
    if (prior.by === "extension") return { status };
    swap.log({ event: "skip", by: "extension", why: `swapped by ${prior.by}` });
    return {
      status: `${status}; the extension leaves it as it is`,
      notice: `${status}; the extension leaves it as it is`,
      level: "info",
    };
  }
  const choice = swap.chooseMode("all", { dir: typeof pi.getAgentDir === "function" ? pi.getAgentDir() : undefined });
  if (choice.error) return skip(choice.error);
  if (choice.mode === "off") return skip(`off (${choice.from})`, "info");
  const gate = ours("./gate.js");
  const piDir = typeof pi.getPackageDir === "function" ? pi.getPackageDir() : gate.piDirAbove(process.argv[1]);
  const verdict = gate.checkClass(piDir, cls, pi.VERSION);
  if (!verdict.ok) return skip(verdict.why);
  const load = ours("../lib/load.js");
  if (load.bindingError()) return skip(load.whatIsMissing());
  const loadOurs = () => ours("../index.js").SessionManager;
  const { swapped, now } = swap.install(cls, loadOurs, choice.mode, "extension", verdict.profile);
  const what = swapped.mode === "all" ? "every static" : swapped.names.join(" and ");
  return {
    swappedClass: now ? cls : undefined,
    swap,
    status: `${NAME}: ${what} of pi's SessionManager ${swapped.names.length === 1 ? "is" : "are"} native (${choice.from === "default" ? "extension" : `extension, ${choice.from}`})`,
  };
}

/**
 * pi's loader maps the extension's import of pi to the module pi runs, unless the package has a copy of pi in its own
 * node_modules (a development checkout installed with `pi install <path>`): then the class swapped is that copy's,
 * which pi never calls. The first session pi hands over tells: it is an instance of the class pi runs.
 */
function checkSameClass(outcome, sessionManager) {
  const { swap, swappedClass } = outcome;
  const ctor = sessionManager?.constructor;
  if (typeof ctor !== "function" || ctor === swappedClass || swap.isOurs(ctor))
    return { ...outcome, swappedClass: undefined };
  swap.uninstall(swappedClass);
  const why =
    "the extension got a copy of pi's module that pi does not run (is @earendil-works/pi-coding-agent installed in the package's own node_modules?)";
  swap.log({ event: "skip", by: "extension", why });
  const status = `${NAME}: ${why}; pi keeps its own SessionManager`;
  return { status, notice: status, level: "warning" };
}

export default function piSessionNative(api) {
  let outcome;
  try {
    outcome = decide();
  } catch (e) {
    const why = String(e?.message ?? e).split("\n")[0];
    outcome = { status: `${NAME}: ${why}; pi keeps its own SessionManager`, level: "warning" };
    outcome.notice = outcome.status;
  }
  api.on("session_start", (_event, ctx) => {
    if (outcome.swappedClass) outcome = checkSameClass(outcome, ctx.sessionManager);
    if (!outcome.notice || globalThis[NOTICE_SHOWN]) return;
    globalThis[NOTICE_SHOWN] = true;
    ctx.ui.notify(outcome.notice, outcome.level ?? "warning");
  });
  api.registerCommand("session-native", {
    description: "Show whether pi's SessionManager runs natively (pi-session-native)",
    handler: async (_args, ctx) => ctx.ui.notify(outcome.status, "info"),
  });
}
