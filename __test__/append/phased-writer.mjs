// Child process of outside.test.mjs: opens a session with ours (or pi's class with SAFETY_IMPL=ref) and, for
// each line "go N TAG" on stdin, appends N messages whose content is `TAG i`, then prints "done" (every append
// returned). So a test can change the file between phases while two of these hold it open.
import { createInterface } from "node:readline";

const { SessionManager } =
  process.env.SAFETY_IMPL === "ref"
    ? await import("../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")
    : await import("../../index.mjs");

const sm = SessionManager.open(process.argv[2]);
for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, n, tag] = line.split(" ");
  if (cmd !== "go") break;
  try {
    for (let i = 0; i < Number(n); i++) sm.appendMessage({ role: "user", content: `${tag} ${i}`, timestamp: i });
  } catch (err) {
    process.stdout.write(`ERR ${err.message}\n`);
    process.exit(3);
  }
  process.stdout.write("done\n");
}
