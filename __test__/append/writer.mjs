// Child process used by the safety tests: appends messages to a session and prints
// each returned id (after the append returned) on its own line.
const { SessionManager } =
  process.env.SAFETY_IMPL === "ref"
    ? await import("../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")
    : await import("../../index.mjs");

const [file, countArg, tag] = process.argv.slice(2);
const count = Number(countArg);
const sm = SessionManager.open(file);
for (let i = 0; i < count; i++) {
  let id;
  try {
    id = sm.appendMessage({
      role: "user",
      content: `${tag} ${i} ${"x".repeat(i % 7 === 0 ? 5000 : 40)}`,
      timestamp: i,
    });
  } catch (err) {
    process.stdout.write(`ERR ${err.code ?? ""} ${err.message}\n`);
    process.stdout.write(`ENTRIES ${sm.getEntries().length}\n`);
    process.exit(3);
  }
  process.stdout.write(`${id}\n`);
}
process.stdout.write(`ENTRIES ${sm.getEntries().length}\n`);
