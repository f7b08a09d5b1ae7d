// Run by heap.test.mjs with a small --max-old-space-size: opens an image-heavy session whose
// base64 data is several times that heap, builds its context, walks its branch and appends,
// and hashes every image's data as it arrived. Prints one JSON line.
import { createHash } from "node:crypto";
import { SessionManager } from "../../index.mjs";

const [file] = process.argv.slice(2);
const sm = SessionManager.open(file);
const hashes = (messages) =>
  messages.flatMap((m) =>
    Array.isArray(m.content)
      ? m.content.filter((c) => c.type === "image").map((c) => createHash("sha256").update(c.data).digest("hex"))
      : [],
  );
const context = sm.buildSessionContext();
const branch = sm.getBranch().filter((e) => e.type === "message");
sm.appendMessage({ role: "user", content: "still here", timestamp: 1 });
const after = sm.buildSessionContext();
const mu = process.memoryUsage();
console.log(
  JSON.stringify({
    context: hashes(context.messages),
    branch: hashes(branch.map((e) => e.message)),
    messagesAfter: after.messages.length,
    heapMiB: Math.round(mu.heapUsed / 2 ** 20),
  }),
);
