// An image-heavy session for the safety tests (heap.test.mjs, mapped.test.mjs): user prompts that
// each carry a base64 screenshot, optionally answered by short assistant replies.
import { createHash, randomBytes } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";

/**
 * Writes the session to `path`: `images` prompts with a `bytes`-long base64 image each (after a
 * short text part), each followed by an assistant reply when `replies`. Returns each image's sha256.
 */
export function writeImageSession(path, { images, bytes, id, cwd, replies = false }) {
  const pool = randomBytes(bytes + images * 8).toString("base64");
  const fd = openSync(path, "w");
  const put = (o) => writeSync(fd, `${JSON.stringify(o)}\n`);
  const ts = (i) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  put({ type: "session", version: 3, id, timestamp: ts(0), cwd });
  const hashes = [];
  let parent = null;
  const step = replies ? 2 : 1;
  for (let i = 1; i <= images * step; i++) {
    let message;
    if ((i - 1) % step === 0) {
      const data = pool.slice(i * 4, i * 4 + bytes);
      hashes.push(createHash("sha256").update(data).digest("hex"));
      const content = [
        { type: "text", text: `screenshot ${i}` },
        { type: "image", data, mimeType: "image/png" },
      ];
      message = { role: "user", content, timestamp: i };
    } else {
      const content = [{ type: "text", text: `I see ${i - 1}.` }];
      message = { role: "assistant", content, stopReason: "stop", timestamp: i };
    }
    const entryId = i.toString(16).padStart(8, "0");
    put({ type: "message", id: entryId, parentId: parent, timestamp: ts(i), message });
    parent = entryId;
  }
  closeSync(fd);
  return hashes;
}
